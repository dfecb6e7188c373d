// A `Neighbourhood` reads its neighbours unchecked: only the views'
// `interior`, after the interior test, may make one.
use gpu_device::Neighbourhood;

fn main() {
    let data = [0u32; 4];
    let p = data.as_ptr();
    let _ = unsafe { Neighbourhood::new(p, p, p) };
}
