// A tensor map borrows its buffer: the buffer cannot be dropped (freed)
// while the map, which names its memory, is alive.
use gpu_runtime::{DeviceBuffer, Stream, Swizzle, TensorMap};

fn main() {
    let stream = Stream::new().unwrap();
    let buffer = DeviceBuffer::<f32>::zeroed_on(64 * 64, &stream).unwrap();
    let map = TensorMap::matrix(&buffer, (64, 64, 64), (16, 16), Swizzle::None).unwrap();
    drop(buffer);
    let _ = map.layout();
}
