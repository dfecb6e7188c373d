// While a batch copies into a pinned buffer, the host can neither read nor
// write it: the batch borrows it exclusively until its copies are tracked.
use gpu_runtime::{DeviceBuffer, PinnedBuffer, Stream};

fn main() -> gpu_runtime::Result<()> {
    let stream = Stream::new()?;
    let device = DeviceBuffer::<f32>::zeroed_on(16, &stream)?;
    let mut host = PinnedBuffer::<f32>::new(16)?;
    host.copies_from_device(|copies| {
        copies.copy(device.view(), 0, &stream)?;
        let _racing = host.as_slice()?;
        Ok(())
    })?;
    Ok(())
}
