// Attack: keep a reference into a one-dimensional double buffer across the
// barrier that swaps its arrays, then read a slot another thread now writes
// (or write a slot other threads now read). Both references borrow the
// `Alternating` token, which the barrier needs mutably.
use gpu_device::prelude::*;
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn read_reference_across_the_swap(mut out: DisjointSlice<f32>, block: Block) {
    let tile = shared_array!(f32; 64, buffers = 2);
    let i = thread_index();
    let mut step = block.alternate();
    tile.fill(&mut step, |s| s as f32);
    step.sync();
    let other = tile.get_ref(&step, 63);
    step.sync();
    out.set(i, *other);
}

#[kernel]
pub fn own_slot_kept_across_the_swap(block: Block) {
    let tile = shared_array!(f32; 64, buffers = 2);
    let mut step = block.alternate();
    let mine = tile.own_mut(&mut step, 0);
    step.sync();
    *mine = 1.0;
}

#[kernel]
pub fn a_mapped_one_dimensional_double_buffer(block: Block) {
    let tile = shared_array!(f32; 64, map = gpu_device::ownership::ByWarp<0>, buffers = 2);
    let _ = (tile, block);
}

fn main() {}
