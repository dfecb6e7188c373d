// Attack: keep a view of the dynamic shared memory, then hand the memory to
// a cp.async ring, whose copies write it while the view is still read. The
// views borrow the `DynamicShared` handle (not only the phase token), so it
// cannot move while one lives; the same for a wgmma tile built from it.
use gpu_device::cp_async::CpAsyncRing;
use gpu_device::prelude::*;
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn view_then_ring(mut out: DisjointSlice<u32>, smem: DynamicShared<u32>, block: Block) {
    let i = thread_index();
    let mut w = block;
    smem.fill(&mut w, |_| 1);
    let r = w.sync();
    let view: &[u32] = smem.as_slice(&r);
    let ring = CpAsyncRing::<u32, 2>::new(smem, 1);
    out.set(i, view[0]);
    drop(ring);
}

#[kernel]
pub fn slot_then_ring(smem: DynamicShared<u32>, block: Block) {
    let mut w = block;
    let mine = smem.own_mut(&mut w, 0);
    let ring = CpAsyncRing::<u32, 2>::new(smem, 1);
    *mine = 2;
    drop(ring);
}

fn main() {}
