use gpu_runtime::{Communicator, DeviceBuffer, ReduceOp, Stream};

// The receive buffer is borrowed mutably: it cannot also be the send buffer
// (NCCL's in-place form is `all_reduce_in_place`).
fn run(comm: &mut Communicator, x: &mut DeviceBuffer<f32>, s: &Stream) -> gpu_runtime::Result<()> {
    comm.all_reduce(&*x, &mut *x, ReduceOp::Sum, s)
}

fn main() {}
