// A `Neighbourhood` borrows the view's slice: it cannot outlive the data.
use gpu_device::{Neighbourhood, Slice2d};

fn main() {
    let kept: Neighbourhood<'_, u32>;
    {
        let data = vec![0u32; 9];
        kept = Slice2d::new(&data, 3, 3).interior(1, 1).unwrap();
    }
    let _ = kept.up();
}
