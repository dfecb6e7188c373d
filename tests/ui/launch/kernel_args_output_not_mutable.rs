// Outputs of updated kernel arguments are borrowed mutably, as at a launch:
// the same buffer cannot be an input and the output of one node.
use gpu_kernels::add_kernel;
use gpu_runtime::{kernel_args, DeviceBuffer, Stream};

fn args(a: &mut DeviceBuffer<f32>, s: &Stream) -> gpu_runtime::Result<gpu_runtime::KernelArgs> {
    kernel_args!(add_kernel[1, 256, s](&*a, &*a, a))
}

fn main() {}
