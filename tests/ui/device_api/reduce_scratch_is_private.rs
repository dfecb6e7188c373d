// The block collectives' scratch array (`block_reduce`, the block scans,
// `block_broadcast`) is written outside the phase token's ownership rule,
// so nothing but the collectives may reach it: a thread that wrote its own
// slot of it made `block_sum` of 64 ones return 1032. Neither a concrete
// element type, a generic bound nor an impl of one's own can reach it now.
use gpu_device::shared::reduce::ReduceElement;
use gpu_device::shared::Shared;

fn by_name() -> Shared<f32, 34> {
    <f32 as ReduceElement>::scratch()
}

fn through_a_bound<T: ReduceElement>() -> Shared<T, 34> {
    T::scratch()
}

#[derive(Clone, Copy)]
struct Mine(f32);

// An impl of one's own could hand out an array its caller also writes.
impl ReduceElement for Mine {}

fn main() {
    let _ = (by_name, through_a_bound::<u32>);
}
