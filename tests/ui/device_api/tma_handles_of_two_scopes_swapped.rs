// A TMA tile's handle does not leave its scope: handles of two scopes of
// the same tile type cannot be swapped (each scope brands its handle with
// a lifetime of its own), or the swapped handle would keep loading into a
// tile whose scope ended and whose barriers a later scope initialised
// again, under that scope's readers.
use gpu_device::prelude::*;
use gpu_device::tma::TensorMap2d;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel(arch = "sm_90")]
pub fn swapped(map: TensorMap2d<f32, 16, 32>, mut out: DisjointSlice<f32>) {
    let t = thread_rank();
    let inner = || gpu_device::tma_tile!(f32, 16, 32);
    let v = gpu_device::tma_tile!(f32, 16, 32).with(|x| {
        inner().with(|y| {
            let _ = y.load(&map, 0, 0).wait();
            core::mem::swap(x, y);
        });
        inner().with(|y2| {
            let a = y2.load(&map, 0, 0).wait();
            let _ = x.load(&map, 16, 0);
            a.get(0, t % 32)
        })
    });
    out.set(thread_index(), v);
}

// The same for the store tiles' handles.
#[kernel(arch = "sm_90")]
pub fn swapped_stores(mut out: DisjointSlice<f32>) {
    gpu_device::tma_tile!(f32, 16, 32).with_store(|x| {
        gpu_device::tma_tile!(f32, 16, 32).with_store(|y| {
            core::mem::swap(x, y);
        });
    });
    out.set(thread_index(), 0.0);
}

fn main() {}
