use gpu_runtime::{Communicator, DeviceBuffer, ReduceOp, Stream};

// NCCL reduces numbers of its own types only: not `bool`, not structs.
fn run(comm: &mut Communicator, x: &mut DeviceBuffer<bool>, s: &Stream) -> gpu_runtime::Result<()> {
    comm.all_reduce_in_place(x, ReduceOp::Max, s)
}

fn main() {}
