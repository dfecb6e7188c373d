// Attack (held): the same memory as a launch's input, through a read-only
// view of a writable view, and as its output: the threads would read what
// other threads of the launch write. The output is borrowed mutably.
use gpu_runtime::{launch, DeviceBuffer, Stream};

fn main() -> gpu_runtime::Result<()> {
    let stream = Stream::new()?;
    let ones = DeviceBuffer::<f32>::device_array(256)?;
    let mut c = DeviceBuffer::<f32>::device_array(256)?;
    let view = c.view_mut();
    launch!(gpu_kernels::add_kernel[1, 256, stream](view.as_view(), &ones, view))?;
    Ok(())
}
