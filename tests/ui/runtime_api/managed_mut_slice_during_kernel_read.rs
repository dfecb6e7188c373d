// A writable host slice of managed memory keeps kernels from reading it.
use gpu_runtime::{launch, DeviceBuffer, ManagedBuffer, Stream};
use gpu_kernels::add_kernel;

fn main() -> gpu_runtime::Result<()> {
    let stream = Stream::new()?;
    let mut a = ManagedBuffer::<f32>::new(256)?;
    let b = DeviceBuffer::<f32>::zeroed_on(256, &stream)?;
    let mut c = DeviceBuffer::<f32>::zeroed_on(256, &stream)?;
    let host = a.as_mut_slice()?;
    launch!(add_kernel[1, 256, stream](&a, &b, &mut c))?;
    host[0] = 1.0;
    Ok(())
}
