// A batch of pinned copies cannot outlive the closure that queues it: its
// copies are tracked when the closure returns, so a batch kept after that
// could queue copies nobody tracks.
use gpu_runtime::{CopiesToDevice, PinnedBuffer};

fn main() -> gpu_runtime::Result<()> {
    let host = PinnedBuffer::from_slice(&[1.0f32; 16])?;
    let mut kept: Option<&CopiesToDevice<'_, f32, gpu_runtime::HostOnly>> = None;
    host.copies_to_device(|copies| {
        kept = Some(copies);
        Ok(())
    })?;
    drop(kept);
    Ok(())
}
