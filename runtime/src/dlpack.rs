//! DLPack, the tensor exchange of PyTorch, CuPy, JAX and NumPy: a
//! [`DeviceBuffer`] handed to another library, or another library's tensor
//! taken in, without a copy, through the versioned
//! `DLManagedTensorVersioned` (DLPack 1.x; its C structs come from the
//! `dlpark` crate, re-exported as [`ffi`]).
//!
//! # Ownership
//!
//! An exported tensor owns its buffer: the consumer calls its deleter once,
//! which drops the buffer (its memory goes back to the pool in stream order,
//! after the work queued on it, the consumer's included). An imported tensor
//! is owned by the buffer made from it: the producer's deleter is called
//! when the buffer is released and its work has finished (on the runtime's
//! release thread), or at once when the import is refused.
//!
//! # Streams
//!
//! As the Python protocol's `__dlpack__(stream=...)`: the consumer names the
//! stream it will use the memory on, and the producer makes that stream wait
//! for its own pending work on the memory. [`DeviceBuffer::into_dlpack`]
//! does so for the stream it is given (from then on, the memory's uses are
//! the consumer's to order); [`DeviceBuffer::from_dlpack`] takes the stream
//! the producer was given, and orders the buffer's uses on other streams
//! after it.
//!
//! # Shapes
//!
//! A buffer is one-dimensional; a tensor's shape goes with it, and only
//! compact row-major tensors are taken in (a non-contiguous view, a
//! broadcast, is refused: the producer makes it contiguous first, as
//! `tensor.contiguous()`).
//!
//! # On the simulator
//!
//! The simulator's devices are CUDA devices to the rest of the runtime, and
//! so to DLPack: tensors are `kDLCUDA` with the simulated device's ordinal,
//! and an import checks the address as on a GPU (it must lie in a simulated
//! device allocation). So round trips within the process work, and a CPU
//! library (NumPy) refuses the tensors by their device type, as it refuses
//! a GPU's.

use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, Lender};
use crate::stream::Stream;
use dlpark::ffi::{
    DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLManagedTensorVersioned, DLPackVersion,
    DLTensor,
};
use gpu_device::DeviceCopy;
use std::ptr::NonNull;

/// DLPack's C structs (`dlpack.h`), from the `dlpark` crate.
pub use dlpark::ffi;
/// A managed tensor's flags (`DLPACK_FLAG_BITMASK_*`).
pub use dlpark::DlpackFlags;

/// The major version of DLPack this runtime reads and writes.
pub const MAJOR_VERSION: u32 = 1;

mod sealed {
    pub trait Sealed {}
}

/// An element type DLPack describes: the integers, `f32` and `f64`.
pub trait DlpackElement: DeviceCopy + sealed::Sealed {
    /// Its DLPack data type.
    const DTYPE: DLDataType;
}

macro_rules! elements {
    ($($t:ty => $code:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl DlpackElement for $t {
            const DTYPE: DLDataType = DLDataType {
                code: DLDataTypeCode::$code,
                bits: (std::mem::size_of::<$t>() * 8) as u8,
                lanes: 1,
            };
        }
    )*};
}

elements! {
    i8 => INT, i16 => INT, i32 => INT, i64 => INT,
    u8 => UINT, u16 => UINT, u32 => UINT, u64 => UINT,
    f32 => FLOAT, f64 => FLOAT,
}

/// An owned `DLManagedTensorVersioned`: its deleter is called when this is
/// dropped, unless [`into_raw`](Self::into_raw) handed it on.
pub struct DlpackTensor(NonNull<DLManagedTensorVersioned>);

// SAFETY: the tensor is only read through `&self`, and its deleter may be
// called from any thread (the DLPack contract; this runtime's is).
unsafe impl Send for DlpackTensor {}

impl DlpackTensor {
    /// Hands the tensor on (to a consumer, a `PyCapsule` named
    /// `"dltensor_versioned"`): the receiver calls its deleter once.
    pub fn into_raw(self) -> *mut DLManagedTensorVersioned {
        let ptr = self.0.as_ptr();
        std::mem::forget(self);
        ptr
    }

    /// Takes ownership of a tensor another library made.
    ///
    /// # Safety
    /// `ptr` is a live `DLManagedTensorVersioned` whose ownership passes to
    /// the returned value (its deleter is called by it, once), and whose
    /// major version, at least, can be read.
    pub unsafe fn from_raw(ptr: NonNull<DLManagedTensorVersioned>) -> DlpackTensor {
        DlpackTensor(ptr)
    }

    /// The tensor's description.
    pub fn tensor(&self) -> &DLTensor {
        // SAFETY: the managed tensor is live while `self` owns it.
        unsafe { &self.0.as_ref().dl_tensor }
    }

    /// Its DLPack version.
    pub fn version(&self) -> DLPackVersion {
        // SAFETY: as in `tensor`.
        unsafe { self.0.as_ref().version }
    }

    /// Its shape (empty for a scalar).
    pub fn shape(&self) -> &[i64] {
        let t = self.tensor();
        match usize::try_from(t.ndim) {
            // SAFETY: DLPack: `shape` holds `ndim` sizes while the tensor lives.
            Ok(n) if n > 0 && !t.shape.is_null() => unsafe {
                std::slice::from_raw_parts(t.shape, n)
            },
            _ => &[],
        }
    }
}

impl Drop for DlpackTensor {
    fn drop(&mut self) {
        // SAFETY: the tensor is owned here, and its deleter is called once.
        unsafe { delete(self.0.as_ptr()) }
    }
}

impl std::fmt::Debug for DlpackTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = self.tensor();
        f.debug_struct("DlpackTensor")
            .field("device", &t.device)
            .field("dtype", &t.dtype)
            .field("shape", &self.shape())
            .finish()
    }
}

/// Calls a managed tensor's deleter, if it has one.
///
/// # Safety
/// `ptr` is a live managed tensor owned by the caller, deleted once.
unsafe fn delete(ptr: *mut DLManagedTensorVersioned) {
    // SAFETY: forwarded: the tensor is live, and the deleter field is
    // readable whatever the tensor's version (DLPack keeps it in place).
    if let Some(deleter) = unsafe { (*ptr).deleter } {
        // SAFETY: the producer's deleter, called once with its tensor.
        unsafe { deleter(ptr) }
    }
}

/// An exported buffer: the managed tensor first (its address is the
/// context's), then what its pointers point into.
#[repr(C)]
struct Exported<T: DeviceCopy> {
    managed: DLManagedTensorVersioned,
    shape: Box<[i64]>,
    strides: Box<[i64]>,
    buffer: DeviceBuffer<T>,
}

unsafe extern "C" fn delete_exported<T: DeviceCopy>(managed: *mut DLManagedTensorVersioned) {
    if !managed.is_null() {
        // SAFETY: `managed` is the first field of an `Exported<T>` boxed by
        // `into_dlpack`, and DLPack calls the deleter once.
        drop(unsafe { Box::from_raw(managed.cast::<Exported<T>>()) });
    }
}

fn refuse(operation: &'static str, reason: String) -> Error {
    Error::InvalidArgument { operation, reason }
}

impl<T: DlpackElement> DeviceBuffer<T> {
    /// Hands the buffer to a DLPack consumer, without a copy, as a tensor of
    /// `shape` (the buffer's length when `None`), for use on `stream`, the
    /// consumer's (the `stream` of `__dlpack__`): `stream` waits for the
    /// buffer's pending work on other streams. The tensor owns the buffer;
    /// its deleter drops it.
    pub fn into_dlpack(self, shape: Option<&[usize]>, stream: &Stream) -> Result<DlpackTensor> {
        const OPERATION: &str = "DeviceBuffer::into_dlpack";
        let shape = shape.map_or_else(|| vec![self.len()], <[usize]>::to_vec);
        let elements = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if elements != Some(self.len()) {
            return Err(refuse(
                OPERATION,
                format!(
                    "shape {shape:?} does not hold the buffer's {} elements",
                    self.len()
                ),
            ));
        }
        let ndim = i32::try_from(shape.len())
            .map_err(|_| refuse(OPERATION, format!("{} dimensions", shape.len())))?;
        let dims = shape
            .iter()
            .map(|&d| i64::try_from(d))
            .collect::<std::result::Result<Box<[i64]>, _>>()
            .map_err(|_| refuse(OPERATION, format!("shape {shape:?} overflows i64")))?;
        let strides = row_major_strides(&dims);
        // The consumer's work waits for the buffer's, and later uses of the
        // buffer (its free) wait for the consumer's.
        let mut buffer = self;
        let data = buffer.as_raw_mut_on(stream)?;
        let device = buffer.device() as i32;
        let mut exported = Box::new(Exported {
            managed: DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: MAJOR_VERSION,
                    minor: 0,
                },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(delete_exported::<T>),
                flags: DlpackFlags::empty(),
                dl_tensor: DLTensor {
                    data: data as usize as *mut std::ffi::c_void,
                    device: DLDevice {
                        device_type: DLDeviceType::CUDA,
                        device_id: device,
                    },
                    ndim,
                    dtype: T::DTYPE,
                    shape: std::ptr::null_mut(),
                    strides: std::ptr::null_mut(),
                    byte_offset: 0,
                },
            },
            shape: dims,
            strides,
            buffer,
        });
        exported.managed.dl_tensor.shape = exported.shape.as_mut_ptr();
        exported.managed.dl_tensor.strides = exported.strides.as_mut_ptr();
        let raw = Box::into_raw(exported);
        // SAFETY: `raw` is a live box; the managed tensor is its first field
        // (`repr(C)`), so the two addresses are one.
        unsafe { (*raw).managed.manager_ctx = raw.cast() };
        // SAFETY: as above; owned by the returned value from here on.
        Ok(DlpackTensor(unsafe {
            NonNull::new_unchecked(std::ptr::addr_of_mut!((*raw).managed))
        }))
    }

    /// Takes in a DLPack tensor another library made, without a copy: a
    /// buffer of its elements (row-major) and its shape. `stream` is the
    /// stream the producer was given (`__dlpack__(stream=...)`), which it
    /// made wait for its pending work: the buffer counts as written there.
    /// The producer's deleter is called when the buffer is released and its
    /// work has finished.
    ///
    /// Refused, with an error naming what was wrong (the deleter is then
    /// called at once): a DLPack major version other than 1; a read-only
    /// tensor (a buffer is writable); memory that is not a CUDA device's
    /// (`kDLCPU`, pinned or managed memory: copy it in with
    /// [`to_device_sync`](DeviceBuffer::to_device_sync)); a device other
    /// than `stream`'s; an element type other than `T`; a shape with a
    /// negative size; a non-contiguous tensor; and what
    /// [`from_raw_parts`](DeviceBuffer::from_raw_parts) refuses (an address
    /// the driver does not know as that device's memory, or past the end of
    /// its allocation).
    ///
    /// # Safety
    /// `tensor` is a live `DLManagedTensorVersioned` (or, for a major
    /// version other than 1, one whose `version` and `deleter` can be read),
    /// whose ownership passes to this call; its description is true (its
    /// memory holds the elements it describes); the producer's pending work
    /// on it is ordered before `stream`; and nothing else writes the memory
    /// while the buffer lives, nor reads it while the buffer's work may
    /// write it, except through the buffer's tracked uses.
    pub unsafe fn from_dlpack(
        tensor: NonNull<DLManagedTensorVersioned>,
        stream: &Stream,
    ) -> Result<(DeviceBuffer<T>, Vec<usize>)> {
        const OPERATION: &str = "DeviceBuffer::from_dlpack";
        // SAFETY: forwarded to the caller: ours to delete.
        let owned = unsafe { DlpackTensor::from_raw(tensor) };
        let version = owned.version();
        if version.major != MAJOR_VERSION {
            return Err(refuse(
                OPERATION,
                format!(
                    "the tensor is DLPack {}.{}, and this runtime reads {MAJOR_VERSION}.x",
                    version.major, version.minor
                ),
            ));
        }
        // SAFETY: a live version-1 tensor (checked above).
        let flags = unsafe { owned.0.as_ref().flags };
        if flags.contains(DlpackFlags::READ_ONLY) {
            return Err(refuse(
                OPERATION,
                "the tensor is read-only, and a device buffer is writable".into(),
            ));
        }
        let t = *owned.tensor();
        check_device(t.device, stream.device())?;
        if t.dtype != T::DTYPE {
            return Err(refuse(
                OPERATION,
                format!(
                    "the tensor's elements are {}, and the buffer's `{}` ({})",
                    dtype_name(t.dtype),
                    std::any::type_name::<T>(),
                    dtype_name(T::DTYPE)
                ),
            ));
        }
        let ndim = usize::try_from(t.ndim)
            .map_err(|_| refuse(OPERATION, format!("{} dimensions", t.ndim)))?;
        if ndim > 0 && t.shape.is_null() {
            return Err(refuse(OPERATION, format!("{ndim} dimensions and no shape")));
        }
        let dims = owned.shape().to_vec();
        let shape = dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<std::result::Result<Vec<usize>, _>>()
            .map_err(|_| refuse(OPERATION, format!("shape {dims:?} has a negative size")))?;
        let len = shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .ok_or_else(|| refuse(OPERATION, format!("shape {dims:?} overflows")))?;
        if ndim > 0 && !t.strides.is_null() && len > 0 {
            // SAFETY: DLPack: non-null strides hold `ndim` values.
            let strides = unsafe { std::slice::from_raw_parts(t.strides, ndim) };
            let compact = row_major_strides(&dims);
            let contiguous = dims
                .iter()
                .zip(strides.iter().zip(compact.iter()))
                .all(|(&d, (s, c))| d == 1 || s == c);
            if !contiguous {
                return Err(refuse(
                    OPERATION,
                    format!(
                        "the tensor is not contiguous: shape {dims:?}, strides {strides:?} (row-major is {compact:?}); make it contiguous first"
                    ),
                ));
            }
        }
        let data = (t.data as usize as u64)
            .checked_add(t.byte_offset)
            .ok_or_else(|| refuse(OPERATION, "the data address overflows".into()))?;
        let lender = Lender::keep(owned);
        // SAFETY: the caller's contract, as `from_raw_parts` asks it: the
        // tensor's memory holds `len` elements of `T` (its dtype is `T`'s),
        // written before `stream`; it stays allocated until the deleter,
        // which the lender calls; nothing else uses it meanwhile.
        let buffer = unsafe { DeviceBuffer::from_raw_parts(data, len, stream, lender) }.map_err(
            |e| match e {
                Error::InvalidArgument { reason, .. } => refuse(OPERATION, reason),
                e => e,
            },
        )?;
        Ok((buffer, shape))
    }
}

/// The strides of a compact row-major tensor of `dims`.
fn row_major_strides(dims: &[i64]) -> Box<[i64]> {
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(dims[i + 1].max(1));
    }
    strides.into()
}

/// Refuses a tensor that is not on CUDA device `ordinal`.
fn check_device(device: DLDevice, ordinal: usize) -> Result<()> {
    const OPERATION: &str = "DeviceBuffer::from_dlpack";
    let kind = device.device_type;
    let host = [
        (DLDeviceType::CPU, "host memory (kDLCPU)"),
        (DLDeviceType::CUDAHOST, "pinned host memory (kDLCUDAHost)"),
        (DLDeviceType::CUDAMANAGED, "managed memory (kDLCUDAManaged)"),
    ];
    if let Some((_, what)) = host.iter().find(|(k, _)| *k == kind) {
        return Err(refuse(
            OPERATION,
            format!("the tensor is in {what}, not a CUDA device's memory: copy it in with DeviceBuffer::to_device_sync"),
        ));
    }
    if kind != DLDeviceType::CUDA {
        return Err(refuse(
            OPERATION,
            format!(
                "the tensor is on a device of DLPack type {}, not CUDA (kDLCUDA, 2)",
                kind.0
            ),
        ));
    }
    if usize::try_from(device.device_id) != Ok(ordinal) {
        return Err(refuse(
            OPERATION,
            format!(
                "the tensor is on CUDA device {}, and the stream on device {ordinal}",
                device.device_id
            ),
        ));
    }
    Ok(())
}

/// A data type as NumPy names it (`float32`), else by its codes.
fn dtype_name(dtype: DLDataType) -> String {
    let kind = match dtype.code {
        DLDataTypeCode::INT => "int",
        DLDataTypeCode::UINT => "uint",
        DLDataTypeCode::FLOAT => "float",
        DLDataTypeCode::BFLOAT => "bfloat",
        DLDataTypeCode::BOOL => "bool",
        DLDataTypeCode::COMPLEX => "complex",
        other => return format!("DLPack type code {} of {} bits", other.0, dtype.bits),
    };
    let lanes = if dtype.lanes == 1 {
        String::new()
    } else {
        format!("x{}", dtype.lanes)
    };
    format!("{kind}{}{lanes}", dtype.bits)
}
