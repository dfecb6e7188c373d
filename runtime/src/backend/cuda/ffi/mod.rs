//! The CUDA driver functions the runtime calls, loaded from `libcuda` at run
//! time.
//!
//! Nothing links against libcuda at build time: a crate that depends on this
//! runtime builds on any machine, with no CUDA installation and no
//! environment variable, and runs on the CPU simulator where no driver is
//! found. The driver library is opened on first use ([`library`]) by the
//! names the NVIDIA driver installs (`libcuda.so.1`, then `libcuda.so`;
//! `nvcuda.dll` on Windows), found by the system's loader as every CUDA
//! program finds it.
//!
//! Every function returns a `c_int` status rather than an enum: a newer
//! driver can return a code no enum here lists, which would be undefined
//! behaviour. Each wrapper below calls the driver's function through the
//! table loaded once; when the library could not be opened, it returns
//! [`ERROR_NOT_INITIALIZED`] without calling anything. Handle types are
//! opaque pointers, as in `cuda.h`.

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;

/// A driver status code.
pub(crate) type Status = c_int;

pub(crate) type CUdevice = c_int;
pub(crate) type CUdeviceptr = u64;
pub(crate) type CUcontext = *mut c_void;
pub(crate) type CUmodule = *mut c_void;
pub(crate) type CUfunction = *mut c_void;
pub(crate) type CUstream = *mut c_void;
pub(crate) type CUevent = *mut c_void;
pub(crate) type CUmemoryPool = *mut c_void;
pub(crate) type CUgraph = *mut c_void;
pub(crate) type CUgraphExec = *mut c_void;
pub(crate) type CUgraphNode = *mut c_void;
/// `CUstreamCallback`: called with the stream, the status of the work before
/// it, and the user data.
pub(crate) type StreamCallback = unsafe extern "C" fn(CUstream, Status, *mut c_void);

pub(crate) const SUCCESS: Status = 0;
/// `CUDA_ERROR_NOT_INITIALIZED`: what every wrapper returns without a driver.
pub(crate) const ERROR_NOT_INITIALIZED: Status = 3;
/// `CUDA_ERROR_INSUFFICIENT_DRIVER`: the driver is older than the runtime needs.
pub(crate) const ERROR_INSUFFICIENT_DRIVER: Status = 35;
pub(crate) const ERROR_NOT_READY: Status = 600;
/// Not a driver status: an optional function (of a newer driver than the
/// oldest supported) that this driver library lacks.
pub(crate) const ERROR_FUNCTION_MISSING: Status = super::super::status::FUNCTION_MISSING;

/// `CUdevice_attribute` values.
pub(crate) mod device_attribute {
    use std::ffi::c_int;
    pub(crate) const MAX_THREADS_PER_BLOCK: c_int = 1;
    pub(crate) const MAX_BLOCK_DIM_X: c_int = 2;
    pub(crate) const MAX_BLOCK_DIM_Y: c_int = 3;
    pub(crate) const MAX_BLOCK_DIM_Z: c_int = 4;
    pub(crate) const MAX_GRID_DIM_X: c_int = 5;
    pub(crate) const MAX_GRID_DIM_Y: c_int = 6;
    pub(crate) const MAX_GRID_DIM_Z: c_int = 7;
    pub(crate) const MAX_SHARED_MEMORY_PER_BLOCK: c_int = 8;
    pub(crate) const MAX_REGISTERS_PER_BLOCK: c_int = 12;
    pub(crate) const MULTIPROCESSOR_COUNT: c_int = 16;
    pub(crate) const MAX_THREADS_PER_MULTIPROCESSOR: c_int = 39;
    pub(crate) const COMPUTE_CAPABILITY_MAJOR: c_int = 75;
    pub(crate) const COMPUTE_CAPABILITY_MINOR: c_int = 76;
    pub(crate) const MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
    pub(crate) const MANAGED_MEMORY: c_int = 83;
    pub(crate) const CONCURRENT_MANAGED_ACCESS: c_int = 89;
}

/// `CUfunction_attribute` values.
pub(crate) mod function_attribute {
    use std::ffi::c_int;
    pub(crate) const MAX_THREADS_PER_BLOCK: c_int = 0;
    pub(crate) const SHARED_SIZE_BYTES: c_int = 1;
    pub(crate) const LOCAL_SIZE_BYTES: c_int = 3;
    pub(crate) const NUM_REGS: c_int = 4;
    pub(crate) const MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
}

/// `CU_LIMIT_STACK_SIZE`, a `CUlimit`.
pub(crate) const LIMIT_STACK_SIZE: c_int = 0;

/// `CUjit_option` values.
pub(crate) const JIT_ERROR_LOG_BUFFER: c_int = 5;
pub(crate) const JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
pub(crate) const JIT_GENERATE_DEBUG_INFO: c_int = 11;
pub(crate) const JIT_GENERATE_LINE_INFO: c_int = 13;

/// The first line of PTX built with debug information, before the level
/// (`line-tables` or `full`): `gpu_builder::DEBUG_MARKER`, which writes it
/// (the runtime does not depend on the builder; `tests/toolchain/ptx.rs` checks that
/// the two agree).
pub(crate) const DEBUG_MARKER: &str = "// gpu-builder debug-info: ";

/// `CUpointer_attribute` values and the memory types they report.
pub(crate) const POINTER_ATTRIBUTE_MEMORY_TYPE: c_int = 2;
pub(crate) const POINTER_ATTRIBUTE_DEVICE_ORDINAL: c_int = 9;
pub(crate) const POINTER_ATTRIBUTE_RANGE_START_ADDR: c_int = 11;
pub(crate) const POINTER_ATTRIBUTE_RANGE_SIZE: c_int = 12;
/// `CU_STREAM_NON_BLOCKING`.
pub(crate) const STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_EVENT_BLOCKING_SYNC`, `CU_EVENT_DISABLE_TIMING`, `CU_EVENT_INTERPROCESS`.
pub(crate) const EVENT_BLOCKING_SYNC: c_uint = 1;
pub(crate) const EVENT_DISABLE_TIMING: c_uint = 2;
pub(crate) const EVENT_INTERPROCESS: c_uint = 4;
/// `CU_MEMHOSTALLOC_PORTABLE`: page-locked for every context, not only the
/// one that allocated it (every device's copies run at full speed).
pub(crate) const HOST_ALLOC_PORTABLE: c_uint = 1;
/// `CU_MEMHOSTALLOC_DEVICEMAP`.
pub(crate) const HOST_ALLOC_DEVICE_MAP: c_uint = 2;
/// `CU_MEM_LOCATION_TYPE_DEVICE`.
pub(crate) const MEM_LOCATION_TYPE_DEVICE: c_int = 1;
/// `CU_MEM_LOCATION_TYPE_HOST`.
pub(crate) const MEM_LOCATION_TYPE_HOST: c_int = 2;
/// `CU_MEM_ATTACH_GLOBAL`: managed memory any stream of any device may use.
pub(crate) const MEM_ATTACH_GLOBAL: c_uint = 1;
/// `CUmem_advise` values: each `SET_*` is followed by its `UNSET_*`.
pub(crate) mod mem_advise {
    use std::ffi::c_int;
    pub(crate) const SET_READ_MOSTLY: c_int = 1;
    pub(crate) const SET_PREFERRED_LOCATION: c_int = 3;
    pub(crate) const SET_ACCESSED_BY: c_int = 5;
}
/// `CUmemorytype` values (2-D copies' ends; what a pointer attribute reports).
pub(crate) const MEMORYTYPE_HOST: c_uint = 1;
pub(crate) const MEMORYTYPE_DEVICE: c_uint = 2;
pub(crate) const MEMORYTYPE_UNIFIED: c_uint = 4;

/// `CUDA_MEMCPY2D` (version 2): a copy of `height` rows of `width_bytes`
/// bytes, each end with its own row pitch.
#[repr(C)]
pub(crate) struct Memcpy2d {
    pub(crate) src_x_bytes: usize,
    pub(crate) src_y: usize,
    pub(crate) src_memory_type: c_uint,
    pub(crate) src_host: *const c_void,
    pub(crate) src_device: CUdeviceptr,
    pub(crate) src_array: *mut c_void,
    pub(crate) src_pitch: usize,
    pub(crate) dst_x_bytes: usize,
    pub(crate) dst_y: usize,
    pub(crate) dst_memory_type: c_uint,
    pub(crate) dst_host: *mut c_void,
    pub(crate) dst_device: CUdeviceptr,
    pub(crate) dst_array: *mut c_void,
    pub(crate) dst_pitch: usize,
    pub(crate) width_bytes: usize,
    pub(crate) height: usize,
}
/// `CU_MEM_ACCESS_FLAGS_PROT_READWRITE`.
pub(crate) const MEM_ACCESS_FLAGS_PROT_READWRITE: c_int = 3;

/// `CUmemLocation`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct MemLocation {
    pub(crate) kind: c_int,
    pub(crate) id: c_int,
}

/// `CUmemAccessDesc`.
#[repr(C)]
pub(crate) struct MemAccessDesc {
    pub(crate) location: MemLocation,
    pub(crate) flags: c_int,
}
/// `CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES` (an `int`).
pub(crate) const MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: c_int = 3;
/// `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD` (a `cuuint64_t`).
pub(crate) const MEMPOOL_ATTR_RELEASE_THRESHOLD: c_int = 4;
/// `CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT` (a `cuuint64_t`).
pub(crate) const MEMPOOL_ATTR_RESERVED_MEM_CURRENT: c_int = 5;
/// `CU_MEMPOOL_ATTR_USED_MEM_CURRENT` (a `cuuint64_t`).
pub(crate) const MEMPOOL_ATTR_USED_MEM_CURRENT: c_int = 7;
/// `CU_STREAM_CAPTURE_MODE_RELAXED`.
pub(crate) const STREAM_CAPTURE_MODE_RELAXED: c_int = 2;
/// `CU_STREAM_CAPTURE_STATUS_ACTIVE`.
pub(crate) const STREAM_CAPTURE_STATUS_ACTIVE: c_int = 1;
/// `CU_GRAPH_NODE_TYPE_*` values the runtime names.
pub(crate) mod graph_node_type {
    use std::ffi::c_int;
    pub(crate) const KERNEL: c_int = 0;
    pub(crate) const MEMCPY: c_int = 1;
    pub(crate) const MEMSET: c_int = 2;
    pub(crate) const EMPTY: c_int = 5;
    pub(crate) const MEM_ALLOC: c_int = 10;
    pub(crate) const MEM_FREE: c_int = 11;
}

/// `CUDA_KERNEL_NODE_PARAMS` (version 1, what `cuGraphExecKernelNodeSetParams`
/// takes).
#[repr(C)]
pub(crate) struct KernelNodeParams {
    pub(crate) func: CUfunction,
    pub(crate) grid: [c_uint; 3],
    pub(crate) block: [c_uint; 3],
    pub(crate) shared_bytes: c_uint,
    pub(crate) kernel_params: *mut *mut c_void,
    pub(crate) extra: *mut *mut c_void,
}

/// The names the driver library goes by, tried in order.
#[cfg(not(windows))]
pub(crate) const LIBRARY_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];
#[cfg(windows)]
pub(crate) const LIBRARY_NAMES: &[&str] = &["nvcuda.dll"];

/// Declares the driver functions: a table of function pointers loaded from
/// the library, and one wrapper per function with the driver's name and
/// signature.
macro_rules! driver_functions {
    (
        $(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> Status;)*
        optional {
            $(fn $opt:ident($($oarg:ident: $oty:ty),* $(,)?) -> Status;)*
        }
    ) => {
        /// The driver's functions, resolved once.
        #[allow(non_snake_case)]
        pub(crate) struct Functions {
            $($name: unsafe extern "C" fn($($ty),*) -> Status,)*
            /// Functions of newer drivers than the oldest supported: `None`
            /// where this driver lacks one (an error when it is called).
            $($opt: Option<unsafe extern "C" fn($($oty),*) -> Status>,)*
            /// Keeps the library loaded (the pointers above point into it).
            _library: libloading::Library,
        }

        impl Functions {
            fn load(library: libloading::Library) -> Result<Functions, String> {
                // SAFETY: each symbol is a driver function with the signature
                // of `cuda.h`, declared alike here; the library stays loaded as
                // long as the table (it is stored in it, and the table lives in
                // a static).
                unsafe {
                    Ok(Functions {
                        $($name: *library
                            .get::<unsafe extern "C" fn($($ty),*) -> Status>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                            .map_err(|e| format!(
                                "the CUDA driver library has no `{}` (a driver older than this runtime needs): {e}",
                                stringify!($name)
                            ))?,)*
                        $($opt: library
                            .get::<unsafe extern "C" fn($($oty),*) -> Status>(
                                concat!(stringify!($opt), "\0").as_bytes(),
                            )
                            .ok()
                            .map(|f| *f),)*
                        _library: library,
                    })
                }
            }
        }

        $(
            /// The driver function of the same name; [`ERROR_NOT_INITIALIZED`]
            /// when no driver library was loaded.
            ///
            /// # Safety
            /// As the driver function's contract in `cuda.h`.
            #[allow(non_snake_case, clippy::too_many_arguments)]
            pub(crate) unsafe fn $name($($arg: $ty),*) -> Status {
                match functions() {
                    // SAFETY: forwarded to the caller.
                    Ok(f) => unsafe { (f.$name)($($arg),*) },
                    Err(_) => ERROR_NOT_INITIALIZED,
                }
            }
        )*

        $(
            /// The driver function of the same name, which older drivers
            /// lack: [`ERROR_FUNCTION_MISSING`] then (and
            /// [`ERROR_NOT_INITIALIZED`] when no driver library was loaded).
            ///
            /// # Safety
            /// As the driver function's contract in `cuda.h`.
            #[allow(non_snake_case, clippy::too_many_arguments)]
            pub(crate) unsafe fn $opt($($oarg: $oty),*) -> Status {
                match functions() {
                    // SAFETY: forwarded to the caller.
                    Ok(Functions { $opt: Some(f), .. }) => unsafe { (*f)($($oarg),*) },
                    Ok(_) => ERROR_FUNCTION_MISSING,
                    Err(_) => ERROR_NOT_INITIALIZED,
                }
            }
        )*
    };
}

driver_functions! {
    fn cuInit(flags: c_uint) -> Status;
    fn cuDriverGetVersion(version: *mut c_int) -> Status;
    fn cuGetErrorName(error: Status, name: *mut *const c_char) -> Status;
    fn cuGetErrorString(error: Status, text: *mut *const c_char) -> Status;
    fn cuDeviceGetCount(count: *mut c_int) -> Status;
    fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> Status;
    fn cuDeviceGetName(name: *mut c_char, len: c_int, device: CUdevice) -> Status;
    fn cuDeviceGetAttribute(value: *mut c_int, attribute: c_int, device: CUdevice) -> Status;
    fn cuDeviceGetDefaultMemPool(pool: *mut CUmemoryPool, device: CUdevice) -> Status;
    fn cuDevicePrimaryCtxRetain(ctx: *mut CUcontext, device: CUdevice) -> Status;
    fn cuCtxSetCurrent(ctx: CUcontext) -> Status;
    fn cuCtxSynchronize() -> Status;
    fn cuPointerGetAttributes(
        count: c_uint,
        attributes: *mut c_int,
        data: *mut *mut c_void,
        ptr: CUdeviceptr,
    ) -> Status;
    fn cuProfilerStart() -> Status;
    fn cuProfilerStop() -> Status;
    fn cuCtxGetStreamPriorityRange(least: *mut c_int, greatest: *mut c_int) -> Status;
    fn cuCtxGetLimit(value: *mut usize, limit: c_int) -> Status;
    fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> Status;
    fn cuMemPoolSetAttribute(pool: CUmemoryPool, attribute: c_int, value: *mut c_void) -> Status;
    fn cuMemPoolGetAttribute(pool: CUmemoryPool, attribute: c_int, value: *mut c_void) -> Status;
    fn cuMemPoolTrimTo(pool: CUmemoryPool, keep: usize) -> Status;
    fn cuMemPoolSetAccess(pool: CUmemoryPool, map: *const MemAccessDesc, count: usize) -> Status;
    fn cuDeviceCanAccessPeer(can_access: *mut c_int, device: CUdevice, peer: CUdevice) -> Status;
    fn cuCtxEnablePeerAccess(peer: CUcontext, flags: c_uint) -> Status;
    fn cuMemcpyPeerAsync(
        dst: CUdeviceptr,
        dst_context: CUcontext,
        src: CUdeviceptr,
        src_context: CUcontext,
        bytes: usize,
        stream: CUstream,
    ) -> Status;
    fn cuMemAllocAsync(ptr: *mut CUdeviceptr, bytes: usize, stream: CUstream) -> Status;
    fn cuMemFreeAsync(ptr: CUdeviceptr, stream: CUstream) -> Status;
    fn cuMemAllocManaged(ptr: *mut CUdeviceptr, bytes: usize, flags: c_uint) -> Status;
    fn cuMemAllocPitch_v2(
        ptr: *mut CUdeviceptr,
        pitch: *mut usize,
        width_bytes: usize,
        height: usize,
        element_bytes: c_uint,
    ) -> Status;
    fn cuMemFree_v2(ptr: CUdeviceptr) -> Status;
    fn cuMemcpy2DAsync_v2(copy: *const Memcpy2d, stream: CUstream) -> Status;
    fn cuMemHostAlloc(ptr: *mut *mut c_void, bytes: usize, flags: c_uint) -> Status;
    fn cuMemFreeHost(ptr: *mut c_void) -> Status;
    fn cuMemHostGetDevicePointer_v2(dptr: *mut CUdeviceptr, ptr: *mut c_void, flags: c_uint) -> Status;
    fn cuMemsetD8Async(ptr: CUdeviceptr, value: u8, count: usize, stream: CUstream) -> Status;
    fn cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize, stream: CUstream) -> Status;
    fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize, stream: CUstream) -> Status;
    fn cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: CUstream) -> Status;
    fn cuStreamCreateWithPriority(stream: *mut CUstream, flags: c_uint, priority: c_int) -> Status;
    fn cuStreamDestroy_v2(stream: CUstream) -> Status;
    fn cuStreamGetFlags(stream: CUstream, flags: *mut c_uint) -> Status;
    fn cuStreamGetPriority(stream: CUstream, priority: *mut c_int) -> Status;
    fn cuStreamSynchronize(stream: CUstream) -> Status;
    fn cuStreamQuery(stream: CUstream) -> Status;
    fn cuStreamWaitEvent(stream: CUstream, event: CUevent, flags: c_uint) -> Status;
    fn cuLaunchHostFunc(stream: CUstream, function: unsafe extern "C" fn(*mut c_void), user_data: *mut c_void) -> Status;
    fn cuStreamAddCallback(stream: CUstream, callback: StreamCallback, user_data: *mut c_void, flags: c_uint) -> Status;
    fn cuStreamBeginCapture_v2(stream: CUstream, mode: c_int) -> Status;
    fn cuStreamEndCapture(stream: CUstream, graph: *mut CUgraph) -> Status;
    fn cuStreamGetCaptureInfo_v2(
        stream: CUstream,
        status: *mut c_int,
        id: *mut u64,
        graph: *mut CUgraph,
        dependencies: *mut *const CUgraphNode,
        count: *mut usize,
    ) -> Status;
    fn cuGraphGetNodes(graph: CUgraph, nodes: *mut CUgraphNode, count: *mut usize) -> Status;
    fn cuGraphNodeGetType(node: CUgraphNode, kind: *mut c_int) -> Status;
    fn cuGraphDebugDotPrint(graph: CUgraph, path: *const c_char, flags: c_uint) -> Status;
    fn cuGraphInstantiateWithFlags(exec: *mut CUgraphExec, graph: CUgraph, flags: u64) -> Status;
    fn cuGraphLaunch(exec: CUgraphExec, stream: CUstream) -> Status;
    fn cuGraphExecKernelNodeSetParams(exec: CUgraphExec, node: CUgraphNode, params: *const KernelNodeParams) -> Status;
    fn cuGraphExecDestroy(exec: CUgraphExec) -> Status;
    fn cuGraphDestroy(graph: CUgraph) -> Status;
    fn cuEventCreate(event: *mut CUevent, flags: c_uint) -> Status;
    fn cuEventDestroy_v2(event: CUevent) -> Status;
    fn cuEventRecord(event: CUevent, stream: CUstream) -> Status;
    fn cuEventSynchronize(event: CUevent) -> Status;
    fn cuEventQuery(event: CUevent) -> Status;
    fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent) -> Status;
    fn cuModuleLoadDataEx(
        module: *mut CUmodule,
        image: *const c_void,
        count: c_uint,
        options: *mut c_int,
        values: *mut *mut c_void,
    ) -> Status;
    fn cuModuleGetFunction(function: *mut CUfunction, module: CUmodule, name: *const c_char) -> Status;
    fn cuModuleGetGlobal_v2(
        ptr: *mut CUdeviceptr,
        bytes: *mut usize,
        module: CUmodule,
        name: *const c_char,
    ) -> Status;
    fn cuFuncGetAttribute(value: *mut c_int, attribute: c_int, function: CUfunction) -> Status;
    fn cuFuncSetAttribute(function: CUfunction, attribute: c_int, value: c_int) -> Status;
    fn cuLaunchCooperativeKernel(
        f: CUfunction,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        stream: CUstream,
        params: *mut *mut c_void,
    ) -> Status;
    fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
        blocks: *mut c_int,
        function: CUfunction,
        block_threads: c_int,
        dynamic_shared_bytes: usize,
    ) -> Status;
    fn cuLaunchKernel(
        f: CUfunction,
        grid_x: c_uint,
        grid_y: c_uint,
        grid_z: c_uint,
        block_x: c_uint,
        block_y: c_uint,
        block_z: c_uint,
        shared_bytes: c_uint,
        stream: CUstream,
        params: *mut *mut c_void,
        extra: *mut *mut c_void,
    ) -> Status;
    optional {
        // CUDA 12.2: managed memory's locations as `CUmemLocation` (host or device).
        fn cuMemPrefetchAsync_v2(
            ptr: CUdeviceptr,
            bytes: usize,
            location: MemLocation,
            flags: c_uint,
            stream: CUstream,
        ) -> Status;
        fn cuMemAdvise_v2(ptr: CUdeviceptr, bytes: usize, advice: c_int, location: MemLocation) -> Status;
    }
}

/// The oldest CUDA driver the runtime supports, as `cuDriverGetVersion`
/// reports it (`1000 * major + 10 * minor`): 11.4, the first with every
/// function the runtime calls (`cuGraphInstantiateWithFlags`; stream-ordered
/// allocation is 11.2, `cuStreamGetCaptureInfo_v2` 11.3).
pub const MIN_DRIVER_VERSION: c_int = 11040;

/// `Ok` for a driver version the runtime supports, else the message.
pub(crate) fn check_driver_version(version: c_int) -> Result<(), String> {
    if version >= MIN_DRIVER_VERSION {
        return Ok(());
    }
    Err(format!(
        "the CUDA driver is version {}.{} (cuDriverGetVersion: {version}), and gpu-runtime needs {}.{} or newer: \
         update the NVIDIA driver (R470 or newer)",
        version / 1000,
        version % 1000 / 10,
        MIN_DRIVER_VERSION / 1000,
        MIN_DRIVER_VERSION % 1000 / 10,
    ))
}

/// The version of the driver `library` is, if it says.
fn version_of(library: &libloading::Library) -> Option<c_int> {
    let mut version = 0;
    // SAFETY: `cuDriverGetVersion` is declared so in `cuda.h` (every driver
    // since CUDA 2.2 has it) and writes one int; it needs no `cuInit`.
    unsafe {
        let get = library
            .get::<unsafe extern "C" fn(*mut c_int) -> Status>(b"cuDriverGetVersion\0")
            .ok()?;
        (get(&mut version) == 0).then_some(version)
    }
}

/// The driver's function table, loaded on first use; the error says which
/// library names were tried and why each failed.
pub(crate) fn functions() -> Result<&'static Functions, &'static str> {
    static FUNCTIONS: OnceLock<Result<Functions, String>> = OnceLock::new();
    FUNCTIONS
        .get_or_init(|| {
            let mut failures = Vec::new();
            for name in LIBRARY_NAMES {
                // SAFETY: loading the NVIDIA driver library runs its
                // initialisers, which have no preconditions.
                match unsafe { libloading::Library::new(*name) } {
                    Ok(library) => {
                        // A driver too old to have every function: say so by its version.
                        let version = version_of(&library);
                        return Functions::load(library).map_err(|missing| {
                            match version.map(check_driver_version) {
                                Some(Err(too_old)) => too_old,
                                _ => missing,
                            }
                        });
                    }
                    Err(e) => failures.push(format!("{name}: {e}")),
                }
            }
            Err(format!(
                "no CUDA driver library found (tried {}); install the NVIDIA driver to run on a GPU",
                failures.join("; ")
            ))
        })
        .as_ref()
        .map_err(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_older_than_11_4_are_refused_naming_their_version() {
        assert!(check_driver_version(11040).is_ok());
        assert!(check_driver_version(13000).is_ok());
        let old = check_driver_version(11020).unwrap_err();
        assert!(
            old.starts_with("the CUDA driver is version 11.2 (cuDriverGetVersion: 11020), and gpu-runtime needs 11.4 or newer"),
            "{old}"
        );
    }
}
