// A kernel with an error still defines its function and its launcher, so
// the uses below (from another module, where rustc would otherwise report
// "cannot find `scale` in `crate`") add no error to the macro's. The uses
// are still type-checked: a wrong argument type would be an error.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn scale(factor: f32, values: Vec<f32>, mut out: DisjointSlice<f32>) {
    let i = thread_index();
    out.set(i, factor * values[i.get()]);
}

#[kernel]
pub fn first<T: DeviceCopy>(values: &[T], mut out: DisjointSlice<T>) {
    out.set(thread_index(), values[0]);
}

mod host {
    use gpu_device::DisjointSlice;
    use gpu_runtime::{kernel_args, launch, DeviceBuffer, Stream};

    pub fn run(x: &DeviceBuffer<f32>, out: &mut DeviceBuffer<f32>, s: &Stream) -> gpu_runtime::Result<()> {
        launch!(crate::scale[1, 32, s](2.0f32, vec![1.0f32; 32], &mut *out))?;
        let _args = kernel_args!(super::scale[1, 32, s](2.0f32, vec![1.0f32; 32], &mut *out))?;
        launch!(crate::first::<f32>[1, 32, s](x, out))
    }

    pub fn body_as_a_function(out: DisjointSlice<f32>) {
        crate::scale(2.0, vec![1.0], out);
    }
}

fn main() {}
