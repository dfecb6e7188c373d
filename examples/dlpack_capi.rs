//! A C ABI over DLPack, built as a shared library, for Python's ctypes (or
//! any C caller): `tests/python/dlpack_torch.py` hands it PyTorch tensors,
//! and takes the result back as a PyTorch tensor, without a copy.
//!
//! ```text
//! cargo build -p gpu-examples --release --example dlpack_capi
//! python3 tests/python/dlpack_torch.py target/release/examples/libdlpack_capi.so
//! ```

use gpu_kernels::saxpy;
use gpu_runtime::dlpack::ffi::DLManagedTensorVersioned;
use gpu_runtime::dlpack::DlpackTensor;
use gpu_runtime::{launch, Device, DeviceBuffer, Stream};
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CString};
use std::ptr::{null, null_mut, NonNull};

thread_local! {
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
}

/// The calling thread's last error from this library, or null; valid until
/// its next call.
#[no_mangle]
pub extern "C" fn gpu_rt_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ref().map_or(null(), |s| s.as_ptr()))
}

fn fail(message: String) -> *mut DLManagedTensorVersioned {
    let text = CString::new(message.replace('\0', "\\0")).expect("no NUL left");
    LAST_ERROR.with(|e| *e.borrow_mut() = Some(text));
    null_mut()
}

/// `a * x + y` into a new tensor of `x`'s shape, on `stream` (a `CUstream`
/// of device `device`, the one the producer of `x` and `y` ordered its work
/// before: the `stream` given to their `__dlpack__`). Takes ownership of
/// `x` and `y` (their deleters are called once the kernel has finished, or
/// at once on an error) and returns a tensor the caller owns, for use on
/// `stream`, or null with [`gpu_rt_last_error`] set.
///
/// # Safety
/// `x` and `y` are live `DLManagedTensorVersioned`s as DLPack defines them,
/// owned by the caller, which hands them over; `stream` is a live stream of
/// `device`'s primary context that outlives the returned tensor and the
/// work queued on it.
#[no_mangle]
pub unsafe extern "C" fn gpu_rt_saxpy(
    a: f32,
    x: *mut DLManagedTensorVersioned,
    y: *mut DLManagedTensorVersioned,
    device: i32,
    stream: *mut c_void,
) -> *mut DLManagedTensorVersioned {
    let (Some(x), Some(y)) = (NonNull::new(x), NonNull::new(y)) else {
        return fail("a null tensor".into());
    };
    // SAFETY: the caller hands both tensors over: owned from here on, so
    // that an early error deletes both.
    let (x, y) = unsafe { (DlpackTensor::from_raw(x), DlpackTensor::from_raw(y)) };
    let run = || -> gpu_runtime::Result<*mut DLManagedTensorVersioned> {
        let device = Device::get(usize::try_from(device).unwrap_or(usize::MAX))?;
        // SAFETY: the caller's: a live stream of the device, outliving the
        // tensors' work.
        let stream = unsafe { Stream::from_external(stream, device) };
        let into_raw = |t: DlpackTensor| NonNull::new(t.into_raw()).expect("owned: not null");
        // SAFETY: owned tensors, handed over once; their producer ordered
        // its work before `stream` (the caller's contract).
        let (x, shape) = unsafe { DeviceBuffer::<f32>::from_dlpack(into_raw(x), &stream) }?;
        // SAFETY: as above.
        let (y, y_shape) = unsafe { DeviceBuffer::<f32>::from_dlpack(into_raw(y), &stream) }?;
        if shape != y_shape {
            return Err(gpu_runtime::Error::InvalidArgument {
                operation: "gpu_rt_saxpy",
                reason: format!("x has shape {shape:?} and y {y_shape:?}"),
            });
        }
        let mut out = DeviceBuffer::<f32>::empty_on(x.len(), &stream)?;
        launch!(saxpy[x.len().div_ceil(256).max(1), 256, stream](a, &x, &y, &mut out))?;
        Ok(out.into_dlpack(Some(&shape), &stream)?.into_raw())
    };
    match run() {
        Ok(tensor) => tensor,
        Err(e) => fail(e.to_string()),
    }
}
