// A graph's kernel node is updated through the kernel's typed launcher: a
// wrong argument type is a compile error, as for `launch!`.
use gpu_kernels::saxpy;
use gpu_runtime::{kernel_args, DeviceBuffer, GraphExec, KernelNode, Stream};

fn update(exec: &mut GraphExec, node: &KernelNode, x: &DeviceBuffer<f64>, out: &mut DeviceBuffer<f32>, s: &Stream) -> gpu_runtime::Result<()> {
    exec.set_kernel_args(node, kernel_args!(saxpy[1, 256, s](2.5f32, x, x, out))?)
}

fn main() {}
