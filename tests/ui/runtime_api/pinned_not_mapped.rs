// Only a buffer made with `new_mapped` has device views.
use gpu_runtime::PinnedBuffer;

fn main() -> Result<(), gpu_runtime::Error> {
    let buffer = PinnedBuffer::<f32>::new(16)?;
    let _view = buffer.device_view();
    Ok(())
}
