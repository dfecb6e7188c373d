use gpu_runtime::{Communicators, DeviceBuffer, ReduceOp, Stream};

// Every rank's receive buffer is written: shared references are refused.
fn run(
    comms: &mut Communicators,
    sends: &[DeviceBuffer<f32>],
    recvs: &[DeviceBuffer<f32>],
    streams: &[Stream],
) -> gpu_runtime::Result<()> {
    comms.all_reduce(sends.iter(), recvs.iter(), ReduceOp::Sum, streams)
}

fn main() {}
