//! The one seam between the runtime and what runs the work.
//!
//! Everything above this module speaks to a [`Driver`]: the CUDA driver
//! ([`cuda::CudaDriver`]) or the CPU simulator ([`simulator::SimulatorDriver`]).
//! Each is a complete implementation of the trait; nothing below the seam
//! imports anything from above it (both depend only on [`crate::abi`], the
//! kernels' calling convention). The process picks one driver on first use
//! ([`choice`]).
//!
//! Handles are plain numbers ([`StreamHandle`], [`EventHandle`], ...): each
//! driver gives its own meaning to them. Every operation returns
//! `Result<_, DriverError>`, and each error names the call that failed.
//! After a kernel fault a device refuses every later call on it with the
//! fault's error (a lost CUDA context; the simulator keeps the same rule,
//! `simulator::fault`), which the runtime reports as `Error::KernelFailed`.
//!
//! # Which device a call acts on
//!
//! Every call names the device it acts on, and acts on that device whatever
//! the calling thread did before:
//!
//! - a call that names a stream acts on the stream's device: a
//!   [`StreamHandle`] carries its device, the default streams' too (CUDA and
//!   the simulator resolve those per device);
//! - a call on an event, module, kernel function, graph or graph instance
//!   acts on the device its handle carries;
//! - a call that names none of these takes the device's ordinal.
//!
//! No call depends on a device "bound" to the thread by an earlier one, so
//! runtime code that looks at another device between checking a stream and
//! queueing work on it (the tracking asks other devices' events whether they
//! completed) cannot send the work to the wrong device. A backend that needs
//! per-thread state for this (CUDA's current context) keeps it to itself and
//! sets it when a call names another device than the thread's last call: one
//! thread-local compare otherwise.
//!
//! Handles of two devices meet only where CUDA allows it: a stream waits
//! for an event of any device, a peer copy names both devices (and runs on a
//! stream of one of them). Elsewhere CUDA refuses a mix
//! (`CUDA_ERROR_INVALID_HANDLE` for an event recorded on a stream of another
//! device, a kernel of another device's module, a graph instance of another
//! device; `CUDA_ERROR_INVALID_VALUE` for a copy on a stream of another
//! context), and so does the simulator. The runtime refuses these above the
//! seam with errors naming both devices; the drivers' refusals are the
//! backstop.
//!
//! To add a backend: implement [`Driver`] in a module beside `cuda` and
//! `simulator`, and teach [`choice`] when to pick it.

pub(crate) mod choice;
mod collective;
pub(crate) mod cuda;
pub(crate) mod simulator;

use crate::abi::HostBody;
use std::ffi::{c_void, CStr};

pub use choice::{backend, Backend, BACKEND_ENV};
pub(crate) use choice::{choice_reason, driver};
pub(crate) use collective::{CollectiveKind, CommHandle, SIMULATED_ID_MAGIC, UNIQUE_ID_BYTES};
pub use collective::{ElementKind, ReduceOp};
pub use cuda::MIN_DRIVER_VERSION;

/// The most devices one process addresses; per-kernel caches have this many slots.
pub const MAX_DEVICES: usize = 16;

/// A device address (CUDA's `CUdeviceptr`).
pub(crate) type DevicePtr = u64;

/// A stream, as a driver names it, and the device it belongs to: every call
/// on it acts on that device. Two raw values are special in CUDA and the
/// simulator alike, the default streams of the handle's device:
/// [`StreamHandle::legacy`] and [`StreamHandle::per_thread`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StreamHandle {
    /// The driver's stream (CUDA's `CUstream`).
    pub(crate) raw: usize,
    /// The device's ordinal.
    pub(crate) device: usize,
}

impl StreamHandle {
    /// CUDA's raw value of the legacy default stream (stream 0).
    pub(crate) const LEGACY_RAW: usize = 0;
    /// CUDA's raw value of the per-thread default stream (`CU_STREAM_PER_THREAD`).
    pub(crate) const PER_THREAD_RAW: usize = 2;

    /// The legacy default stream of `device`.
    pub(crate) const fn legacy(device: usize) -> StreamHandle {
        StreamHandle {
            raw: Self::LEGACY_RAW,
            device,
        }
    }

    /// The calling thread's per-thread default stream of `device`.
    pub(crate) const fn per_thread(device: usize) -> StreamHandle {
        StreamHandle {
            raw: Self::PER_THREAD_RAW,
            device,
        }
    }
}

/// A tiled tensor map to encode: `cuTensorMapEncodeTiled`'s arguments,
/// checked by the runtime (`memory/tensor_map.rs`) before a driver sees
/// them; the first `rank` entries of each array count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TensorMapRequest {
    /// The first element's device address (16-byte aligned).
    pub(crate) address: DevicePtr,
    /// `CUtensorMapDataType`.
    pub(crate) data_type: u32,
    /// The element's size in bytes.
    pub(crate) element_bytes: u32,
    pub(crate) rank: u32,
    /// Extents, innermost first.
    pub(crate) dims: [u64; 5],
    /// Strides in bytes, innermost first (`strides[0]`, the element's
    /// size, is not the driver's: it takes `strides[1..rank]`).
    pub(crate) strides: [u64; 5],
    /// The box's extents, innermost first.
    pub(crate) boxes: [u32; 5],
    /// `CUtensorMapSwizzle`.
    pub(crate) swizzle: u32,
}

/// An encoded tensor map (`CUtensorMap`): 128 bytes, 64-byte aligned.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EncodedTensorMap(pub(crate) [u64; 16]);

/// An event, as a driver names it, and the device it was made on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct EventHandle {
    pub(crate) raw: usize,
    pub(crate) device: usize,
}

/// A loaded module of kernels, and the device it was loaded into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ModuleHandle {
    pub(crate) raw: usize,
    pub(crate) device: usize,
}

/// One kernel entry point of a loaded module, and the module's device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FunctionHandle {
    pub(crate) raw: usize,
    pub(crate) device: usize,
}

/// A function a driver calls on one of its threads when a stream reaches it.
pub(crate) type HostFunction = unsafe extern "C" fn(user_data: *mut c_void);

/// A function a driver calls once when a stream reaches it, also after a
/// device error, with the status of the work before it (0: success): CUDA's
/// `CUstreamCallback` (the stream argument is the raw stream, or null).
pub(crate) type CompletionCallback =
    unsafe extern "C" fn(stream: *mut c_void, status: i32, user_data: *mut c_void);

/// A graph captured from streams of one device, and that device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GraphHandle {
    pub(crate) raw: usize,
    pub(crate) device: usize,
}

/// An instantiated (executable) graph, and its device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GraphExecHandle {
    pub(crate) raw: usize,
    pub(crate) device: usize,
}

/// One node of a graph, also naming the same node in its instantiations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct GraphNodeHandle(pub(crate) usize);

/// What a graph node does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GraphNodeKind {
    /// A kernel launch.
    Kernel,
    /// A copy.
    Memcpy,
    /// A memset (zeroing).
    Memset,
    /// An allocation in stream order, made inside the graph.
    MemAlloc,
    /// A free in stream order of memory the graph allocated.
    MemFree,
    /// A node that only orders others.
    Empty,
    /// Any other kind, by CUDA's number (`CUgraphNodeType`).
    Other(i32),
}

/// A failed driver call: which call, and the driver's name and text for the code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverError {
    /// The driver function that failed.
    pub call: &'static str,
    /// The numeric status code.
    pub code: i32,
    /// The driver's symbolic name for the code (`CUDA_ERROR_...`).
    pub name: String,
    /// The driver's description of the code.
    pub description: String,
}

/// Status codes the runtime tells apart.
pub(crate) mod status {
    pub(crate) const INVALID_VALUE: i32 = 1;
    pub(crate) const INVALID_PTX: i32 = 218;
    pub(crate) const INVALID_HANDLE: i32 = 400;
    pub(crate) const OUT_OF_MEMORY: i32 = 2;
    pub(crate) const LAUNCH_OUT_OF_RESOURCES: i32 = 701;
    pub(crate) const LAUNCH_FAILED: i32 = 719;
    pub(crate) const NOT_READY: i32 = 600;
    pub(crate) const NOT_FOUND: i32 = 500;
    pub(crate) const NOT_PERMITTED: i32 = 800;
    pub(crate) const NOT_SUPPORTED: i32 = 801;
    pub(crate) const STREAM_CAPTURE_UNSUPPORTED: i32 = 900;
    pub(crate) const STREAM_CAPTURE_MERGE: i32 = 902;
    pub(crate) const STREAM_CAPTURE_UNMATCHED: i32 = 903;
    pub(crate) const STREAM_CAPTURE_UNJOINED: i32 = 904;
    pub(crate) const STREAM_CAPTURE_ISOLATION: i32 = 905;
    pub(crate) const STREAM_CAPTURE_INVALIDATED: i32 = 901;
    pub(crate) const STREAM_CAPTURE_IMPLICIT: i32 = 906;
    pub(crate) const PEER_ACCESS_UNSUPPORTED: i32 = 217;
    pub(crate) const PEER_ACCESS_ALREADY_ENABLED: i32 = 704;
    /// Not a CUDA code: the collective library (NCCL) could not be loaded.
    pub(crate) const COLLECTIVE_LIBRARY_MISSING: i32 = -1;
    /// Not a CUDA code: an error of the collective library (NCCL), whose
    /// own code is in the error's name.
    pub(crate) const COLLECTIVE_FAILED: i32 = -2;
    /// Not a CUDA code: a driver function of a newer CUDA than the oldest
    /// supported, which this driver library lacks.
    pub(crate) const FUNCTION_MISSING: i32 = -3;
}

impl DriverError {
    /// Whether the code says a kernel failed while running: the context is
    /// unusable afterwards. (720, `CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE`,
    /// is a launch refused before it ran, not a fault.)
    pub fn is_kernel_fault(&self) -> bool {
        matches!(self.code, 700 | 702 | 714..=719)
    }

    /// Whether the device ran out of memory.
    pub(crate) fn is_out_of_memory(&self) -> bool {
        self.code == status::OUT_OF_MEMORY
    }
}

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} failed with {} ({}): {}",
            self.call, self.name, self.code, self.description
        )
    }
}

/// The limits a launch is checked against, read once per device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Threads in one block, all dimensions together.
    pub max_threads_per_block: u32,
    /// Threads along each block dimension.
    pub max_block_dim: [u32; 3],
    /// Blocks along each grid dimension.
    pub max_grid_dim: [u32; 3],
    /// Shared memory a block gets without opting in (bytes).
    pub max_shared_per_block: u32,
    /// Shared memory a block can opt in to (bytes).
    pub max_shared_per_block_optin: u32,
    /// Streaming multiprocessors.
    pub multiprocessor_count: u32,
    /// Threads one multiprocessor runs at once.
    pub max_threads_per_multiprocessor: u32,
    /// 32-bit registers the threads of one block may use together.
    pub max_registers_per_block: u32,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
}

#[cfg(test)]
impl DeviceLimits {
    /// An H100's limits, for the launch checks' unit tests.
    pub(crate) const H100: DeviceLimits = DeviceLimits {
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 64],
        max_grid_dim: [i32::MAX as u32, 65535, 65535],
        max_shared_per_block: 48 << 10,
        max_shared_per_block_optin: 227 << 10,
        multiprocessor_count: 132,
        max_threads_per_multiprocessor: 2048,
        max_registers_per_block: 65536,
        compute_capability: (9, 0),
    };
}

/// What a driver reports of a device when it opens it.
pub(crate) struct DeviceProperties {
    pub(crate) name: String,
    pub(crate) limits: DeviceLimits,
}

/// What a kernel entry point allows, read once per device.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FunctionLimits {
    pub(crate) max_threads_per_block: u32,
    pub(crate) static_shared_bytes: u32,
    pub(crate) max_dynamic_shared_bytes: u32,
    /// Local memory one thread of the kernel uses (local arrays, spills).
    pub(crate) local_bytes_per_thread: u32,
    /// Registers one thread of the kernel uses.
    pub(crate) registers_per_thread: u32,
}

/// Where managed memory is prefetched to, or what an advice names: a device
/// (by ordinal) or the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// The memory of device `ordinal`.
    Device(usize),
    /// Host memory.
    Host,
}

/// Advice about managed memory's use (CUDA's `cuMemAdvise`): it changes where
/// pages live and how faults are served, never the contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Advice {
    /// Mostly read: each processor that reads it may keep a read-only copy
    /// (a write invalidates the copies).
    ReadMostly,
    /// The pages stay at this location where possible.
    PreferredLocation(Location),
    /// This processor maps the pages, so its accesses do not fault them over.
    AccessedBy(Location),
}

/// What a device can do with managed memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ManagedSupport {
    /// `CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY`.
    pub(crate) managed: bool,
    /// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`: host and device may
    /// touch managed memory at the same time (without it, the host may not
    /// touch any while a kernel runs on the device).
    pub(crate) concurrent: bool,
}

/// One end of a 2-D copy: its first row's address and the bytes from one
/// row's start to the next's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct End2d {
    pub(crate) at: Memory2d,
    pub(crate) pitch: usize,
}

/// Where one end of a 2-D copy is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Memory2d {
    /// Host memory, pageable or page-locked.
    Host(*mut u8),
    /// Device (or managed) memory.
    Device(DevicePtr),
}

/// A 2-D copy: `rows` rows of `width_bytes` bytes (CUDA's `CUDA_MEMCPY2D`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Copy2d {
    pub(crate) src: End2d,
    pub(crate) dst: End2d,
    pub(crate) width_bytes: usize,
    pub(crate) rows: usize,
}

/// How an event is made (CUDA's event flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EventFlags {
    pub(crate) blocking_sync: bool,
    pub(crate) timing: bool,
    pub(crate) interprocess: bool,
}

/// A kernel launch as a driver receives it (queued on a stream by
/// [`Driver::launch`], or put into a graph instance): CUDA runs `function`,
/// the simulator runs `host`.
pub(crate) struct KernelLaunch<'a> {
    /// The kernel's name, for the simulator's reports.
    pub(crate) name: &'static str,
    pub(crate) function: FunctionHandle,
    pub(crate) host: HostBody,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    pub(crate) shared_bytes: u32,
    /// A cooperative launch (`cuLaunchCooperativeKernel`): every block
    /// resident at once, for grid sync. The runtime has checked that the
    /// grid fits ([`Driver::resident_blocks_per_multiprocessor`]).
    pub(crate) cooperative: bool,
    /// A cluster launch's thread-block cluster shape (`cuLaunchKernelEx`
    /// with `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`): the blocks of each
    /// cluster resident at once. The runtime has checked that it divides
    /// the grid and is the kernel's declared shape.
    pub(crate) cluster: Option<[u32; 3]>,
    /// One pointer per PTX parameter, each to a live value of that parameter's type.
    pub(crate) params: &'a mut [*mut c_void],
}

/// One rank's part of a collective.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Collective {
    pub(crate) kind: CollectiveKind,
    pub(crate) comm: CommHandle,
    pub(crate) send: DevicePtr,
    pub(crate) recv: DevicePtr,
    /// NCCL's count (see [`CollectiveKind`]).
    pub(crate) count: usize,
    pub(crate) element: ElementKind,
    /// A stream of the communicator's device: the call acts on it.
    pub(crate) stream: StreamHandle,
}

/// A device allocation, as the driver describes an address inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MemoryRange {
    /// The device holding it.
    pub(crate) device: usize,
    /// Its first address and size in bytes, where the driver tells them.
    pub(crate) extent: Option<(DevicePtr, usize)>,
}

/// The operations the runtime needs of a device, implemented by the CUDA
/// driver and by the simulator. Each acts on the device it names (see the
/// module documentation): through a handle, which carries its device, or an
/// ordinal.
pub(crate) trait Driver: Sync {
    // Devices -------------------------------------------------------------------

    /// How many devices there are.
    fn device_count(&self) -> Result<usize, DriverError>;
    /// Opens device `ordinal` (for CUDA: retains its primary context). Every
    /// other call names opened devices only.
    fn open(&self, ordinal: usize) -> Result<DeviceProperties, DriverError>;
    /// Waits for all work on `device`.
    fn synchronize_device(&self, device: usize) -> Result<(), DriverError>;
    /// The device allocation holding address `ptr`, asked with `device`'s
    /// context current, or `None` where `ptr` is not device memory (host
    /// memory, an unknown address): for the checks of memory another library
    /// hands over (`cuPointerGetAttributes`).
    fn memory_range(
        &self,
        device: usize,
        ptr: DevicePtr,
    ) -> Result<Option<MemoryRange>, DriverError>;
    /// Encodes a tiled tensor map of memory on `device`
    /// (`cuTensorMapEncodeTiled`, CUDA 12.0: an older driver's missing
    /// function is an error naming it): the 128 bytes the bulk tensor
    /// copies read, which the simulator's copies read as it wrote them.
    fn encode_tensor_map(
        &self,
        device: usize,
        map: &TensorMapRequest,
    ) -> Result<EncodedTensorMap, DriverError>;
    /// Starts (`true`) or stops the collection of an attached profiler on
    /// `device` (`cuProfilerStart`/`cuProfilerStop`).
    fn set_profiler_collection(&self, device: usize, on: bool) -> Result<(), DriverError>;
    /// Free and total memory of `device`.
    fn memory_info(&self, device: usize) -> Result<(usize, usize), DriverError>;
    /// Returns `device`'s cached pool memory that no allocation uses to the
    /// system, until the pool reserves at most `keep` bytes (CUDA's
    /// `cuMemPoolTrimTo`).
    fn trim_memory_pool(&self, device: usize, keep: usize) -> Result<(), DriverError>;
    /// The bytes of `device`'s pool that allocations use, and the bytes it
    /// reserves (used and cached): `USED_MEM_CURRENT`, `RESERVED_MEM_CURRENT`.
    fn memory_pool_usage(&self, device: usize) -> Result<(u64, u64), DriverError>;
    /// The cached bytes `device`'s pool keeps at a synchronisation before
    /// returning the rest to the system (`RELEASE_THRESHOLD`).
    fn memory_pool_release_threshold(&self, device: usize) -> Result<u64, DriverError>;
    /// Sets the release threshold of `device`'s pool.
    fn set_memory_pool_release_threshold(
        &self,
        device: usize,
        bytes: u64,
    ) -> Result<(), DriverError>;

    // Peer access -----------------------------------------------------------------

    /// Whether the hardware lets device `ordinal` (opened) reach the memory of
    /// device `peer` (opened, another device) directly.
    fn can_access_peer(&self, ordinal: usize, peer: usize) -> Result<bool, DriverError>;
    /// Lets `device` reach the memory of `peer` (another device): its pool
    /// allocations included. Enabling it again is no error.
    fn enable_peer_access(&self, device: usize, peer: usize) -> Result<(), DriverError>;

    // Device memory, ordered on streams -------------------------------------------

    /// Allocates `bytes` (> 0) of the stream's device's memory, usable on
    /// `stream` in stream order.
    fn alloc_async(&self, bytes: usize, stream: StreamHandle) -> Result<DevicePtr, DriverError>;
    /// Frees memory from `alloc_async` once `stream` reaches this point.
    ///
    /// # Safety
    /// `ptr` came from `alloc_async` on the stream's device, is freed once,
    /// and no work queued after this point on any stream uses it.
    unsafe fn free_async(&self, ptr: DevicePtr, stream: StreamHandle) -> Result<(), DriverError>;

    // Managed and pitched memory, freed synchronously --------------------------

    /// Whether `device` supports managed memory, and concurrent access to it.
    fn managed_support(&self, device: usize) -> Result<ManagedSupport, DriverError>;
    /// Allocates `bytes` (> 0) of managed memory through `device`, attached
    /// globally (any stream of any device may use it).
    fn alloc_managed(&self, device: usize, bytes: usize) -> Result<DevicePtr, DriverError>;
    /// Allocates `rows` (> 0) rows of `width_bytes` (> 0) on `device`, each
    /// row starting at a multiple of the returned pitch (bytes), aligned for
    /// accesses of `element_bytes` (4, 8 or 16).
    fn alloc_pitch(
        &self,
        device: usize,
        width_bytes: usize,
        rows: usize,
        element_bytes: u32,
    ) -> Result<(DevicePtr, usize), DriverError>;
    /// Frees memory of `alloc_managed` or `alloc_pitch` (`cuMemFree`), now.
    ///
    /// # Safety
    /// `ptr` came from one of them through `device`, is freed once, and no
    /// queued or running work uses it.
    unsafe fn free_now(&self, device: usize, ptr: DevicePtr) -> Result<(), DriverError>;
    /// Migrates `bytes` of managed memory at `ptr` to `to`, in stream order.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` is managed memory that stays allocated until the
    /// stream reaches the prefetch.
    unsafe fn prefetch_async(
        &self,
        ptr: DevicePtr,
        bytes: usize,
        to: Location,
        stream: StreamHandle,
    ) -> Result<(), DriverError>;
    /// Sets (or, when `!set`, clears) `advice` on `bytes` of managed memory
    /// at `ptr`, allocated through `device`.
    ///
    /// # Safety
    /// `ptr..ptr + bytes` is managed memory, allocated.
    unsafe fn advise(
        &self,
        device: usize,
        ptr: DevicePtr,
        bytes: usize,
        advice: Advice,
        set: bool,
    ) -> Result<(), DriverError>;
    /// A 2-D copy in stream order (`cuMemcpy2DAsync`). A pageable host
    /// source is read before this returns; a pageable host destination may be
    /// written later: the caller waits for the stream before using it.
    ///
    /// # Safety
    /// Each end holds `rows` rows of `width_bytes` at its pitch, readable
    /// (source) or writable (destination) and allocated until the copy has
    /// completed; the two do not overlap.
    unsafe fn copy_2d_async(&self, copy: &Copy2d, stream: StreamHandle) -> Result<(), DriverError>;

    // Page-locked host memory ---------------------------------------------------

    /// Allocates `bytes` (> 0) of page-locked host memory, made through
    /// `device` and page-locked for every device (portable), mapped into the
    /// devices' address spaces when `mapped`.
    fn host_alloc(&self, device: usize, bytes: usize, mapped: bool)
        -> Result<*mut u8, DriverError>;
    /// The address on `device` of mapped page-locked memory.
    fn host_device_pointer(&self, device: usize, ptr: *mut u8) -> Result<DevicePtr, DriverError>;
    /// Frees page-locked memory (through `device`, the one it was made through).
    ///
    /// # Safety
    /// `ptr` came from `host_alloc`, is freed once, and no queued work uses it.
    unsafe fn host_free(&self, device: usize, ptr: *mut u8) -> Result<(), DriverError>;

    // Transfers -----------------------------------------------------------------

    /// Sets `bytes` bytes at `dst` to `value`, in stream order.
    ///
    /// # Safety
    /// `dst` is device memory of `bytes` bytes that stays allocated, and
    /// unused by other streams, until the stream reaches this.
    unsafe fn memset_async(
        &self,
        dst: DevicePtr,
        value: u8,
        bytes: usize,
        stream: StreamHandle,
    ) -> Result<(), DriverError>;
    /// Copies host memory to the device in stream order. Pageable `src` is
    /// read before this returns; page-locked `src`, when the stream gets there.
    ///
    /// # Safety
    /// `src` is readable for `bytes` until the copy has completed; `dst` is
    /// device memory of `bytes` that stays allocated until then.
    unsafe fn copy_to_device_async(
        &self,
        dst: DevicePtr,
        src: *const u8,
        bytes: usize,
        stream: StreamHandle,
    ) -> Result<(), DriverError>;
    /// Copies device memory to the host in stream order.
    ///
    /// # Safety
    /// `dst` is writable for `bytes` and untouched until the copy has
    /// completed; `src` is device memory that stays allocated until then.
    unsafe fn copy_to_host_async(
        &self,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
        stream: StreamHandle,
    ) -> Result<(), DriverError>;
    /// Copies device memory to device memory in stream order.
    ///
    /// # Safety
    /// Both ranges are device memory of `bytes` that stays allocated until
    /// the copy has completed.
    unsafe fn copy_device_async(
        &self,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        stream: StreamHandle,
    ) -> Result<(), DriverError>;

    /// Copies device memory of device `src_device` to device memory of
    /// device `dst_device` (both opened, different) in stream order; the
    /// stream belongs to one of the two.
    ///
    /// # Safety
    /// Both ranges are device memory of `bytes` on their devices that stays
    /// allocated until the copy has completed.
    unsafe fn copy_peer_async(
        &self,
        dst: DevicePtr,
        dst_device: usize,
        src: DevicePtr,
        src_device: usize,
        bytes: usize,
        stream: StreamHandle,
    ) -> Result<(), DriverError>;

    // Streams -------------------------------------------------------------------

    /// A new stream on `device`.
    fn stream_create(
        &self,
        device: usize,
        non_blocking: bool,
        priority: i32,
    ) -> Result<StreamHandle, DriverError>;
    /// Whether the stream is non-blocking, and its priority.
    fn stream_properties(&self, stream: StreamHandle) -> Result<(bool, i32), DriverError>;
    /// Destroys a stream once its queued work has completed.
    fn stream_destroy(&self, stream: StreamHandle) -> Result<(), DriverError>;
    /// Waits until all work queued on the stream has completed.
    fn stream_synchronize(&self, stream: StreamHandle) -> Result<(), DriverError>;
    /// Whether all work queued on the stream has completed.
    fn stream_is_done(&self, stream: StreamHandle) -> Result<bool, DriverError>;
    /// Makes work queued on `stream` after this wait for the event's latest
    /// record; the event may belong to another device.
    fn stream_wait_event(
        &self,
        stream: StreamHandle,
        event: EventHandle,
    ) -> Result<(), DriverError>;
    /// The (least, greatest) stream priorities of `device`.
    fn stream_priority_range(&self, device: usize) -> Result<(i32, i32), DriverError>;
    /// Runs `function(user_data)` on a driver thread when the stream gets there.
    ///
    /// # Safety
    /// `function` is safe to call once with `user_data` on another thread, and
    /// does not call the driver.
    unsafe fn launch_host_function(
        &self,
        stream: StreamHandle,
        function: HostFunction,
        user_data: *mut c_void,
    ) -> Result<(), DriverError>;

    /// The error a status code passed to a [`CompletionCallback`] of a
    /// stream of `device` stands for.
    fn status_error(&self, device: usize, call: &'static str, code: i32) -> DriverError;
    /// Calls `callback(stream, status, user_data)` once on a driver thread
    /// when the stream gets there, with the status of the work before it;
    /// unlike a host function, also after a device error (CUDA's
    /// `cuStreamAddCallback`). Not capturable.
    ///
    /// # Safety
    /// `callback` is safe to call once with `user_data` on another thread, and
    /// does not call the driver.
    unsafe fn stream_add_callback(
        &self,
        stream: StreamHandle,
        callback: CompletionCallback,
        user_data: *mut c_void,
    ) -> Result<(), DriverError>;

    // Graphs --------------------------------------------------------------------

    /// Starts capturing the work queued on `stream` into a graph instead of
    /// running it, in relaxed mode (no call of any thread is refused because
    /// of the capture; the runtime refuses what cannot be captured itself).
    /// Streams that wait for an event recorded in the capture join it.
    fn stream_begin_capture(&self, stream: StreamHandle) -> Result<(), DriverError>;
    /// Ends the capture begun on `stream` and returns its graph. Every stream
    /// that joined it must have been joined back into `stream` by an event.
    fn stream_end_capture(&self, stream: StreamHandle) -> Result<GraphHandle, DriverError>;
    /// The nodes the next operation captured on `stream` will depend on:
    /// right after a captured launch, that launch's node.
    fn stream_capture_dependencies(
        &self,
        stream: StreamHandle,
    ) -> Result<Vec<GraphNodeHandle>, DriverError>;
    /// A graph's nodes and their kinds.
    fn graph_nodes(
        &self,
        graph: GraphHandle,
    ) -> Result<Vec<(GraphNodeHandle, GraphNodeKind)>, DriverError>;
    /// The graph in Graphviz's dot language (CUDA's `cuGraphDebugDotPrint`),
    /// with each node's details when `verbose`.
    fn graph_debug_dot(&self, graph: GraphHandle, verbose: bool) -> Result<String, DriverError>;
    /// Instantiates a graph; the instance is independent of later changes to
    /// the graph.
    fn graph_instantiate(&self, graph: GraphHandle) -> Result<GraphExecHandle, DriverError>;
    /// Queues a run of the instance on `stream` (of the instance's device),
    /// after the instance's earlier runs on any stream.
    fn graph_launch(&self, exec: GraphExecHandle, stream: StreamHandle) -> Result<(), DriverError>;
    /// Replaces the kernel, shape and arguments of a kernel node of the
    /// instance, for its runs queued afterwards; the kernel is the
    /// instance's device's.
    ///
    /// # Safety
    /// As [`Driver::launch`], for every later run of the instance.
    unsafe fn graph_exec_set_kernel(
        &self,
        exec: GraphExecHandle,
        node: GraphNodeHandle,
        launch: KernelLaunch<'_>,
    ) -> Result<(), DriverError>;
    /// Destroys an instance (runs already queued complete).
    fn graph_exec_destroy(&self, exec: GraphExecHandle) -> Result<(), DriverError>;
    /// Destroys a graph (its instances stay usable).
    fn graph_destroy(&self, graph: GraphHandle) -> Result<(), DriverError>;

    // Events --------------------------------------------------------------------

    /// A new event on `device`.
    fn event_create(&self, device: usize, flags: EventFlags) -> Result<EventHandle, DriverError>;
    /// Destroys an event (a pending record completes first).
    fn event_destroy(&self, event: EventHandle) -> Result<(), DriverError>;
    /// Records the event at the current end of the stream, which belongs to
    /// the event's device.
    fn event_record(&self, event: EventHandle, stream: StreamHandle) -> Result<(), DriverError>;
    /// Waits until the event's latest record has completed.
    fn event_synchronize(&self, event: EventHandle) -> Result<(), DriverError>;
    /// Whether the event's latest record has completed.
    fn event_is_done(&self, event: EventHandle) -> Result<bool, DriverError>;
    /// Milliseconds between two completed records of events of one device.
    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, DriverError>;

    // Kernels -------------------------------------------------------------------

    /// Loads PTX text into `device`; on failure the JIT log comes too.
    fn module_load(&self, device: usize, ptx: &CStr)
        -> Result<ModuleHandle, (DriverError, String)>;
    /// The device address of the global `name` of `bytes` bytes in a loaded
    /// module (`cuModuleGetGlobal`), `None` when the module has none of
    /// that name; an error when its size is not `bytes`.
    fn module_global(
        &self,
        module: ModuleHandle,
        name: &CStr,
        bytes: usize,
    ) -> Result<Option<DevicePtr>, DriverError>;
    /// An entry point of a loaded module.
    fn module_function(
        &self,
        module: ModuleHandle,
        name: &CStr,
    ) -> Result<FunctionHandle, DriverError>;
    /// What an entry point allows.
    fn function_limits(&self, function: FunctionHandle) -> Result<FunctionLimits, DriverError>;
    /// The stack of each thread of `device`'s kernels, in bytes (CUDA's
    /// `CU_LIMIT_STACK_SIZE`; the simulator's `GPU_SIM_STACK_BYTES`).
    fn stack_bytes_per_thread(&self, device: usize) -> Result<usize, DriverError>;

    /// How many blocks of `block_threads` threads and `shared_bytes` of
    /// dynamic shared memory of `function` one multiprocessor keeps
    /// resident at once (CUDA's occupancy calculator,
    /// `cuOccupancyMaxActiveBlocksPerMultiprocessor`): times the
    /// multiprocessors, what a cooperative launch may have.
    fn resident_blocks_per_multiprocessor(
        &self,
        function: FunctionHandle,
        block_threads: u32,
        shared_bytes: u32,
    ) -> Result<u32, DriverError>;
    /// Lets an entry point use up to `bytes` of dynamic shared memory.
    fn set_max_dynamic_shared(
        &self,
        function: FunctionHandle,
        bytes: u32,
    ) -> Result<(), DriverError>;
    /// Queues a kernel launch on `stream`, of the kernel's device.
    ///
    /// # Safety
    /// `launch.params` holds one pointer per parameter of the entry point, each
    /// to a live value of that parameter's type; device memory they refer to
    /// stays allocated until the kernel has completed, and no argument that
    /// the kernel writes is used by other work running at the same time.
    unsafe fn launch(
        &self,
        launch: KernelLaunch<'_>,
        stream: StreamHandle,
    ) -> Result<(), DriverError>;

    // Collectives (NCCL) ------------------------------------------------------------

    /// A new unique id, from which every rank of one communicator is made.
    fn comm_unique_id(&self) -> Result<[u8; UNIQUE_ID_BYTES], DriverError>;
    /// Rank `rank` of a communicator of `ranks` ranks made from `id`, on
    /// `device`; returns once every rank has joined.
    fn comm_init_rank(
        &self,
        device: usize,
        id: &[u8; UNIQUE_ID_BYTES],
        ranks: usize,
        rank: usize,
    ) -> Result<CommHandle, DriverError>;
    /// A communicator with one rank per device of `devices` (opened, each
    /// once), all in this process: rank `i` on `devices[i]`.
    fn comm_init_all(&self, devices: &[usize]) -> Result<Vec<CommHandle>, DriverError>;
    /// Destroys a communicator once its queued collectives have completed.
    fn comm_destroy(&self, comm: CommHandle) -> Result<(), DriverError>;
    /// Queues collectives, one per rank of communicators of this process, as
    /// one group (all ranks of a communicator in this process take part in the
    /// same call), each on its stream's device (the communicator's).
    ///
    /// # Safety
    /// Each call's ranges are device memory of its rank's device, of the sizes
    /// its kind and count give, that stays allocated until the collective has
    /// completed and that no other work uses meanwhile (the receive range is
    /// written); the communicators are live and each used by one thread at a time.
    unsafe fn collectives(&self, calls: &[Collective]) -> Result<(), DriverError>;
}
