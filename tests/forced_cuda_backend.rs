//! With the CUDA backend forced and no GPU (CI, or `CUDA_VISIBLE_DEVICES=` on a
//! GPU machine) every entry point returns `Error::NoDevice` with a message
//! that says so.
//!
//! scripts/gpu-bundle.sh runs this binary with `CUDA_VISIBLE_DEVICES=` set.

use gpu_runtime::{current_stream, Device, DeviceBuffer, Error, Stream};

#[test]
fn no_gpu_is_an_error_not_a_crash() {
    // Without this, a machine with no GPU runs on the simulator instead. This
    // is the binary's only test: nothing reads the environment concurrently.
    std::env::set_var(gpu_runtime::BACKEND_ENV, "cuda");
    let no_device = |e: Error| match e {
        Error::NoDevice { reason } => reason,
        other => panic!("expected NoDevice, got {other:?}"),
    };
    let reason = no_device(Device::count().unwrap_err());
    assert!(!reason.is_empty());
    no_device(Stream::new().unwrap_err());
    no_device(DeviceBuffer::<f32>::device_array(10).unwrap_err());
    no_device(current_stream().unwrap_err());
    no_device(gpu_runtime::synchronize().unwrap_err());
    let message = Stream::new().unwrap_err().to_string();
    assert!(
        message.starts_with("no CUDA device is available"),
        "{message}"
    );
    assert!(message.contains("needs an NVIDIA GPU"), "{message}");
}
