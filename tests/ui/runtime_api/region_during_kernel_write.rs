// A 2-D region of a buffer borrows it: a kernel cannot write the buffer while
// the region (to be copied later) lives.
use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_kernels::fill;

fn main() -> gpu_runtime::Result<()> {
    let stream = Stream::new()?;
    let mut a = DeviceBuffer::<u32>::zeroed_on(64, &stream)?;
    let region = a.region_2d(8, 8)?.strided(.., 2, .., 2)?;
    launch!(fill[1, 64, stream](1u32, &mut a))?;
    let _host = region.copy_to_host_sync(&stream)?;
    Ok(())
}
