//! N launches of `add_kernel`, for counting the launch path's instructions with callgrind
//! (benches/NOTES.md, "The tracked launch path against bare cust"): copy it to
//! `examples/` and `cargo build --release --example launch_loop`.
use gpu_runtime::{launch, DeviceBuffer, Stream};
fn main() -> gpu_runtime::Result<()> {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let stream = Stream::new()?;
    let a = DeviceBuffer::to_device_sync(&[1.0f32; 256], &stream)?;
    let b = DeviceBuffer::to_device_sync(&[2.0f32; 256], &stream)?;
    let mut c = DeviceBuffer::<f32>::device_array(256)?;
    for _ in 0..n {
        launch!(gpu_kernels::add_kernel[1, 256, stream](&a, &b, &mut c))?;
    }
    stream.synchronize()?;
    Ok(())
}
