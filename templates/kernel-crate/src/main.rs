//! Launches this crate's kernel and checks its result, on a GPU or, where
//! there is none, on the CPU simulator.
use gpu_runtime::{launch, DeviceBuffer, Stream};

fn main() -> Result<(), gpu_runtime::Error> {
    let n = 10_000;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let y = vec![1.0f32; n];
    let stream = Stream::new()?;
    let dx = DeviceBuffer::to_device_sync(&x, &stream)?;
    let dy = DeviceBuffer::to_device_sync(&y, &stream)?;
    let mut out = DeviceBuffer::<f32>::device_array(n)?;
    launch!(my_kernels::saxpy[n.div_ceil(256), 256, stream](2.0, &dx, &dy, &mut out))?;
    let result = out.copy_to_host_sync(&stream)?;
    for (i, &r) in result.iter().enumerate() {
        assert_eq!(r, 2.0 * i as f32 + 1.0, "element {i}");
    }
    println!("my-kernels: saxpy of {n} elements is correct");
    Ok(())
}
