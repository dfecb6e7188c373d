// Memory nothing wrote may hold any bytes: only types valid for every bit
// pattern can be allocated without zeroing.
use gpu_runtime::DeviceBuffer;

fn main() {
    let _flags = DeviceBuffer::<bool>::empty(16);
}
