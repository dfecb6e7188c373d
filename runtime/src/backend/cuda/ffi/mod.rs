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
//!
//! Why not cudarc's `driver::sys` (bindgen's output of `cuda.h`, which
//! `bindings_check.rs` checks these declarations against): its `CUresult`
//! and every other enumeration are Rust enums, so a status a newer driver
//! adds (CUDA 13's `CUDA_ERROR_STREAM_DETACHED`, 917, is not in the CUDA
//! 12.8 bindings) is undefined behaviour on return; its loader panics where
//! no libcuda is found (the simulator fallback needs an error) and where a
//! function is missing (an optional function needs `FUNCTION_MISSING`); and
//! its `cuda-*` version features allow exactly one per build, so a library
//! that picks one breaks every dependent crate that uses cudarc with
//! another. ARCHITECTURE.md ("The driver's FFI") has the details.

#[cfg(test)]
pub(crate) mod signatures;
mod types;

use std::ffi::{c_char, c_int, c_uint, c_void};
use std::sync::OnceLock;
pub(crate) use types::*;

/// The names the driver library goes by, tried in order.
#[cfg(not(windows))]
pub(crate) const LIBRARY_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];
#[cfg(windows)]
pub(crate) const LIBRARY_NAMES: &[&str] = &["nvcuda.dll"];

/// `_` for a type (the tests' signatures inferred from cudarc's).
#[cfg(test)]
macro_rules! infer {
    ($ty:ty) => {
        _
    };
}

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

        /// Each function's name, and the sizes of its arguments as declared
        /// here and in cudarc's `driver::sys` (bindgen's output of `cuda.h`;
        /// a different count of arguments does not compile).
        #[cfg(test)]
        pub(crate) fn argument_sizes() -> Vec<(&'static str, Vec<usize>, Vec<usize>)> {
            use self::signatures::ArgumentSizes;
            vec![
                $({
                    let theirs: unsafe fn($(infer!($ty)),*) -> _ = self::signatures::driver_sys::$name;
                    (stringify!($name), vec![$(std::mem::size_of::<$ty>()),*], theirs.argument_sizes())
                },)*
                $({
                    let theirs: unsafe fn($(infer!($oty)),*) -> _ = self::signatures::driver_sys::$opt;
                    (stringify!($opt), vec![$(std::mem::size_of::<$oty>()),*], theirs.argument_sizes())
                },)*
            ]
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
        // CUDA 11.8: launches with attributes (a thread-block cluster's shape).
        fn cuLaunchKernelEx(
            config: *const LaunchExConfig,
            function: CUfunction,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        ) -> Status;
        // CUDA 12.0: tensor maps for the bulk tensor copies (TMA, sm_90).
        fn cuTensorMapEncodeTiled(
            map: *mut TensorMapBytes,
            data_type: c_uint,
            rank: c_uint,
            address: *mut c_void,
            dims: *const u64,
            strides: *const u64,
            boxes: *const u32,
            element_strides: *const u32,
            interleave: c_uint,
            swizzle: c_uint,
            l2_promotion: c_uint,
            oob_fill: c_uint,
        ) -> Status;
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
