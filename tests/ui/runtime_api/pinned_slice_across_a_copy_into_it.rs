// Attack (held): a host slice of a pinned buffer kept while a copy from the
// device into that buffer is queued: the device would write memory the host
// is reading. A copy into a pinned buffer borrows it mutably, and a mapped
// buffer's writable device view too.
use gpu_runtime::{DeviceBuffer, MappedBuffer, PinnedBuffer, Stream};

fn main() -> gpu_runtime::Result<()> {
    let stream = Stream::new()?;
    let source = DeviceBuffer::<f32>::device_array(256)?;
    let mut pinned = PinnedBuffer::<f32>::new(256)?;
    let seen = pinned.as_slice()?;
    source.copy_to_pinned(&mut pinned, &stream)?;
    let mut mapped = MappedBuffer::<f32>::new_mapped(256)?;
    let host = mapped.as_slice()?;
    let device = mapped.device_view_mut();
    let _ = (seen[0], host[0], device);
    Ok(())
}
