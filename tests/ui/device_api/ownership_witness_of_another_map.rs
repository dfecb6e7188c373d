// Attack: reach one output through two maps, so that thread `i` of block
// 0 and block `i`'s leader both write element `i`: a per-block output
// takes its leader's witness only, and a thread index (or another map's
// items) is refused at compile time.
use gpu_device::ownership::{Blocked, ByBlock, Items, Striped};
use gpu_device::prelude::*;
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn by_thread_index(mut sums: DisjointSlice<f32, ByBlock>) {
    sums.set(thread_index(), 1.0);
}

#[kernel]
pub fn blocked_items_on_a_striped_output(mut out: DisjointSlice<f32, Striped<4>>) {
    let mine = Items::<Blocked<4>>::mine();
    if let Some(i) = mine.get(0) {
        out.set(i, 1.0);
    }
}

// A plain output takes no leader either.
#[kernel]
pub fn leader_on_a_plain_output(mut out: DisjointSlice<f32>) {
    if let Some(leader) = block_leader() {
        out.set(leader, 1.0);
    }
}

fn main() {}
