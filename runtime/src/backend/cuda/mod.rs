//! The CUDA driver behind the [`Driver`] seam.
//!
//! Each device is used through its primary context (the one the CUDA runtime,
//! CuPy and Numba share). Every call makes the context of the device it
//! names current on the calling thread first ([`CudaDriver::bind`]: one
//! thread-local compare when the thread's last call named the same device),
//! so no call depends on what an earlier one left current. Device memory comes from the device's default
//! memory pool (`cuMemAllocAsync`/`cuMemFreeAsync`), which keeps freed memory
//! for reuse instead of returning it to the system (release threshold: no
//! limit), as CuPy's pool does.

mod call;
mod ffi;
mod graph;
mod managed;
mod nccl;
mod peer;
mod pointer;
mod pool;

pub use ffi::MIN_DRIVER_VERSION;
pub use nccl::NCCL_LIBRARY_ENV;

use super::{
    Advice, Collective, CommHandle, CompletionCallback, Copy2d, DeviceLimits, DeviceProperties,
    DevicePtr, Driver, DriverError, EventFlags, EventHandle, FunctionHandle, FunctionLimits,
    GraphExecHandle, GraphHandle, GraphNodeHandle, GraphNodeKind, HostFunction, KernelLaunch,
    Location, ManagedSupport, ModuleHandle, StreamHandle, MAX_DEVICES, UNIQUE_ID_BYTES,
};
use call::{check, check_done, event, stream};
use ffi::*;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::ptr;
use std::sync::OnceLock;

/// The CUDA driver, with each opened device's primary context and memory pool.
pub(crate) struct CudaDriver {
    initialised: OnceLock<Result<(), DriverError>>,
    devices: [OnceLock<OpenDevice>; MAX_DEVICES],
}

#[derive(Clone, Copy)]
struct OpenDevice {
    context: CUcontext,
    pool: CUmemoryPool,
}

// SAFETY: the context and pool handles are only passed to the driver, which
// is thread-safe.
unsafe impl Send for OpenDevice {}
// SAFETY: as above.
unsafe impl Sync for OpenDevice {}

thread_local! {
    /// The device ordinal whose context this thread made current last.
    static BOUND: Cell<Option<usize>> = const { Cell::new(None) };
}

impl CudaDriver {
    pub(crate) const fn new() -> Self {
        CudaDriver {
            initialised: OnceLock::new(),
            devices: [const { OnceLock::new() }; MAX_DEVICES],
        }
    }

    fn init(&self) -> Result<(), DriverError> {
        self.initialised
            .get_or_init(|| {
                functions().map_err(|reason| DriverError {
                    call: "loading libcuda",
                    code: ERROR_NOT_INITIALIZED,
                    name: "CUDA_ERROR_NOT_INITIALIZED".into(),
                    description: reason.to_string(),
                })?;
                // SAFETY: cuInit takes flags 0 and may be called any number of times.
                check("cuInit", unsafe { cuInit(0) })?;
                let mut version = 0;
                // SAFETY: writes one int.
                check("cuDriverGetVersion", unsafe {
                    cuDriverGetVersion(&mut version)
                })?;
                check_driver_version(version).map_err(|description| DriverError {
                    call: "cuDriverGetVersion",
                    code: ERROR_INSUFFICIENT_DRIVER,
                    name: "CUDA_ERROR_INSUFFICIENT_DRIVER".into(),
                    description,
                })
            })
            .clone()
    }

    fn device_handle(ordinal: usize) -> Result<CUdevice, DriverError> {
        let mut device = 0;
        // SAFETY: writes one device handle.
        check("cuDeviceGet", unsafe {
            cuDeviceGet(&mut device, ordinal as c_int)
        })?;
        Ok(device)
    }

    /// Device `ordinal`'s context and pool, once opened.
    fn opened(&self, ordinal: usize, call: &'static str) -> Result<OpenDevice, DriverError> {
        self.devices
            .get(ordinal)
            .and_then(OnceLock::get)
            .copied()
            .ok_or_else(|| DriverError {
                call,
                code: super::status::INVALID_VALUE,
                name: "CUDA_ERROR_INVALID_CONTEXT".into(),
                description: format!("device {ordinal} was not opened"),
            })
    }

    /// Makes device `ordinal`'s context (opened) current on this thread,
    /// unless this thread's last call named the same device: every call does
    /// this first for the device it acts on.
    #[inline]
    fn bind(&self, ordinal: usize) -> Result<(), DriverError> {
        if BOUND.with(Cell::get) == Some(ordinal) {
            return Ok(());
        }
        self.make_current(ordinal)
    }

    fn make_current(&self, ordinal: usize) -> Result<(), DriverError> {
        let device = self.opened(ordinal, "cuCtxSetCurrent")?;
        // SAFETY: `context` is a retained primary context.
        check("cuCtxSetCurrent", unsafe {
            cuCtxSetCurrent(device.context)
        })?;
        BOUND.with(|b| b.set(Some(ordinal)));
        Ok(())
    }

    /// Forgets which context this thread made current: the next `bind` sets
    /// it again. For after calls into libraries (NCCL) that may switch the
    /// thread's current context.
    fn forget_binding() {
        BOUND.with(|b| b.set(None));
    }
}

impl Driver for CudaDriver {
    fn device_count(&self) -> Result<usize, DriverError> {
        self.init()?;
        let mut n = 0;
        // SAFETY: writes one int.
        check("cuDeviceGetCount", unsafe { cuDeviceGetCount(&mut n) })?;
        Ok(n.max(0) as usize)
    }

    fn open(&self, ordinal: usize) -> Result<DeviceProperties, DriverError> {
        self.init()?;
        let device = Self::device_handle(ordinal)?;
        let attr = |a: c_int| -> Result<u32, DriverError> {
            let mut v = 0;
            // SAFETY: writes one int.
            check("cuDeviceGetAttribute", unsafe {
                cuDeviceGetAttribute(&mut v, a, device)
            })?;
            Ok(v.max(0) as u32)
        };
        use device_attribute as A;
        let limits = DeviceLimits {
            max_threads_per_block: attr(A::MAX_THREADS_PER_BLOCK)?,
            max_block_dim: [
                attr(A::MAX_BLOCK_DIM_X)?,
                attr(A::MAX_BLOCK_DIM_Y)?,
                attr(A::MAX_BLOCK_DIM_Z)?,
            ],
            max_grid_dim: [
                attr(A::MAX_GRID_DIM_X)?,
                attr(A::MAX_GRID_DIM_Y)?,
                attr(A::MAX_GRID_DIM_Z)?,
            ],
            max_shared_per_block: attr(A::MAX_SHARED_MEMORY_PER_BLOCK)?,
            max_shared_per_block_optin: attr(A::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            multiprocessor_count: attr(A::MULTIPROCESSOR_COUNT)?,
            max_threads_per_multiprocessor: attr(A::MAX_THREADS_PER_MULTIPROCESSOR)?,
            max_registers_per_block: attr(A::MAX_REGISTERS_PER_BLOCK)?,
            compute_capability: (
                attr(A::COMPUTE_CAPABILITY_MAJOR)?,
                attr(A::COMPUTE_CAPABILITY_MINOR)?,
            ),
        };
        let mut buf = [0 as c_char; 256];
        // SAFETY: the driver writes at most `len` bytes, NUL-terminated.
        check("cuDeviceGetName", unsafe {
            cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, device)
        })?;
        // SAFETY: NUL-terminated within the buffer (above).
        let name = unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        let mut context = ptr::null_mut();
        // SAFETY: writes one context handle; the retain is never released, so
        // the primary context lives as long as the process.
        check("cuDevicePrimaryCtxRetain", unsafe {
            cuDevicePrimaryCtxRetain(&mut context, device)
        })?;
        let mut pool = ptr::null_mut();
        // SAFETY: writes one pool handle.
        check("cuDeviceGetDefaultMemPool", unsafe {
            cuDeviceGetDefaultMemPool(&mut pool, device)
        })?;
        let mut keep_everything: u64 = u64::MAX;
        // SAFETY: the release threshold attribute takes a `cuuint64_t`.
        check("cuMemPoolSetAttribute", unsafe {
            cuMemPoolSetAttribute(
                pool,
                MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut keep_everything as *mut u64).cast(),
            )
        })?;
        let mut no_hidden_waits: c_int = 0;
        // SAFETY: the reuse attributes take an `int`. Off: a block freed on
        // one stream is reused on another only once the free is ordered
        // before (an event wait) or has completed, never by a dependency the
        // driver adds behind the program's back (as the simulator's pool).
        check("cuMemPoolSetAttribute", unsafe {
            cuMemPoolSetAttribute(
                pool,
                MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
                (&mut no_hidden_waits as *mut c_int).cast(),
            )
        })?;
        let _ = self.devices[ordinal].set(OpenDevice { context, pool });
        Ok(DeviceProperties { name, limits })
    }

    fn synchronize_device(&self, device: usize) -> Result<(), DriverError> {
        self.bind(device)?;
        // SAFETY: no arguments; the device's context is current.
        check("cuCtxSynchronize", unsafe { cuCtxSynchronize() })
    }

    fn memory_range(
        &self,
        device: usize,
        ptr: DevicePtr,
    ) -> Result<Option<super::MemoryRange>, DriverError> {
        self.bind(device)?;
        Ok(pointer::memory_range(ptr))
    }

    fn set_profiler_collection(&self, device: usize, on: bool) -> Result<(), DriverError> {
        self.bind(device)?;
        pointer::set_profiler_collection(on)
    }

    fn memory_info(&self, device: usize) -> Result<(usize, usize), DriverError> {
        self.bind(device)?;
        let (mut free, mut total) = (0, 0);
        // SAFETY: writes two sizes.
        check("cuMemGetInfo", unsafe {
            cuMemGetInfo_v2(&mut free, &mut total)
        })?;
        Ok((free, total))
    }

    fn trim_memory_pool(&self, device: usize, keep: usize) -> Result<(), DriverError> {
        self.trim_pool(device, keep)
    }

    fn memory_pool_usage(&self, device: usize) -> Result<(u64, u64), DriverError> {
        Ok((
            self.pool_attribute(device, MEMPOOL_ATTR_USED_MEM_CURRENT)?,
            self.pool_attribute(device, MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?,
        ))
    }

    fn memory_pool_release_threshold(&self, device: usize) -> Result<u64, DriverError> {
        self.pool_attribute(device, MEMPOOL_ATTR_RELEASE_THRESHOLD)
    }

    fn set_memory_pool_release_threshold(
        &self,
        device: usize,
        bytes: u64,
    ) -> Result<(), DriverError> {
        self.set_release_threshold(device, bytes)
    }

    fn can_access_peer(&self, ordinal: usize, peer: usize) -> Result<bool, DriverError> {
        self.peer_reachable(ordinal, peer)
    }

    fn enable_peer_access(&self, device: usize, peer: usize) -> Result<(), DriverError> {
        self.bind(device)?;
        self.enable_peer(device, peer)
    }

    fn alloc_async(&self, bytes: usize, on: StreamHandle) -> Result<DevicePtr, DriverError> {
        self.bind(on.device)?;
        let mut p = 0;
        // SAFETY: writes one device pointer; `on` is a live stream.
        check("cuMemAllocAsync", unsafe {
            cuMemAllocAsync(&mut p, bytes, stream(on))
        })?;
        Ok(p)
    }

    unsafe fn free_async(&self, ptr: DevicePtr, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        check("cuMemFreeAsync", unsafe { cuMemFreeAsync(ptr, stream(on)) })
    }

    fn managed_support(&self, device: usize) -> Result<ManagedSupport, DriverError> {
        self.init()?;
        self.managed_support_of(device)
    }

    fn alloc_managed(&self, device: usize, bytes: usize) -> Result<DevicePtr, DriverError> {
        self.managed_alloc(device, bytes)
    }

    fn alloc_pitch(
        &self,
        device: usize,
        width_bytes: usize,
        rows: usize,
        element_bytes: u32,
    ) -> Result<(DevicePtr, usize), DriverError> {
        self.pitch_alloc(device, width_bytes, rows, element_bytes)
    }

    unsafe fn free_now(&self, device: usize, ptr: DevicePtr) -> Result<(), DriverError> {
        // SAFETY: forwarded to the caller.
        unsafe { self.free_allocation(device, ptr) }
    }

    unsafe fn prefetch_async(
        &self,
        ptr: DevicePtr,
        bytes: usize,
        to: Location,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        // SAFETY: forwarded to the caller.
        unsafe { self.prefetch(ptr, bytes, to, on) }
    }

    unsafe fn advise(
        &self,
        device: usize,
        ptr: DevicePtr,
        bytes: usize,
        advice: Advice,
        set: bool,
    ) -> Result<(), DriverError> {
        // SAFETY: forwarded to the caller.
        unsafe { self.mem_advise(device, ptr, bytes, advice, set) }
    }

    unsafe fn copy_2d_async(&self, copy: &Copy2d, on: StreamHandle) -> Result<(), DriverError> {
        // SAFETY: forwarded to the caller.
        unsafe { self.copy_2d(copy, on) }
    }

    fn host_alloc(
        &self,
        device: usize,
        bytes: usize,
        mapped: bool,
    ) -> Result<*mut u8, DriverError> {
        self.bind(device)?;
        let mut p = ptr::null_mut();
        // Portable: pinned for every device's context, so that copies on any
        // device's streams are asynchronous (and mapped for every device).
        let flags = HOST_ALLOC_PORTABLE | if mapped { HOST_ALLOC_DEVICE_MAP } else { 0 };
        // SAFETY: writes one pointer.
        check("cuMemHostAlloc", unsafe {
            cuMemHostAlloc(&mut p, bytes, flags)
        })?;
        Ok(p.cast())
    }

    fn host_device_pointer(&self, device: usize, ptr: *mut u8) -> Result<DevicePtr, DriverError> {
        self.bind(device)?;
        let mut d = 0;
        // SAFETY: writes one address; the driver checks `ptr` (flags must be 0).
        check("cuMemHostGetDevicePointer", unsafe {
            cuMemHostGetDevicePointer_v2(&mut d, ptr.cast(), 0)
        })?;
        Ok(d)
    }

    unsafe fn host_free(&self, device: usize, ptr: *mut u8) -> Result<(), DriverError> {
        self.bind(device)?;
        // SAFETY: forwarded to the caller.
        check("cuMemFreeHost", unsafe { cuMemFreeHost(ptr.cast()) })
    }

    unsafe fn memset_async(
        &self,
        dst: DevicePtr,
        value: u8,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        check("cuMemsetD8Async", unsafe {
            cuMemsetD8Async(dst, value, bytes, stream(on))
        })
    }

    unsafe fn copy_to_device_async(
        &self,
        dst: DevicePtr,
        src: *const u8,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        check("cuMemcpyHtoDAsync", unsafe {
            cuMemcpyHtoDAsync_v2(dst, src.cast(), bytes, stream(on))
        })
    }

    unsafe fn copy_to_host_async(
        &self,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        check("cuMemcpyDtoHAsync", unsafe {
            cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes, stream(on))
        })
    }

    unsafe fn copy_device_async(
        &self,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        check("cuMemcpyDtoDAsync", unsafe {
            cuMemcpyDtoDAsync_v2(dst, src, bytes, stream(on))
        })
    }

    unsafe fn copy_peer_async(
        &self,
        dst: DevicePtr,
        dst_device: usize,
        src: DevicePtr,
        src_device: usize,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        unsafe { self.copy_peer(dst, dst_device, src, src_device, bytes, on) }
    }

    fn stream_create(
        &self,
        device: usize,
        non_blocking: bool,
        priority: i32,
    ) -> Result<StreamHandle, DriverError> {
        self.bind(device)?;
        let mut s = ptr::null_mut();
        let flags = if non_blocking { STREAM_NON_BLOCKING } else { 0 };
        // SAFETY: writes one stream handle.
        check("cuStreamCreateWithPriority", unsafe {
            cuStreamCreateWithPriority(&mut s, flags, priority)
        })?;
        Ok(StreamHandle {
            raw: s as usize,
            device,
        })
    }

    fn stream_properties(&self, on: StreamHandle) -> Result<(bool, i32), DriverError> {
        self.bind(on.device)?;
        let (mut flags, mut priority): (c_uint, c_int) = (0, 0);
        // SAFETY: a live stream; each call writes one integer.
        unsafe {
            check("cuStreamGetFlags", cuStreamGetFlags(stream(on), &mut flags))?;
            check(
                "cuStreamGetPriority",
                cuStreamGetPriority(stream(on), &mut priority),
            )?;
        }
        Ok((flags & STREAM_NON_BLOCKING != 0, priority))
    }

    fn stream_destroy(&self, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: the stream was created by `stream_create` and is destroyed once.
        check("cuStreamDestroy", unsafe { cuStreamDestroy_v2(stream(on)) })
    }

    fn stream_synchronize(&self, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: a live stream handle or a default-stream constant.
        check("cuStreamSynchronize", unsafe {
            cuStreamSynchronize(stream(on))
        })
    }

    fn stream_is_done(&self, on: StreamHandle) -> Result<bool, DriverError> {
        self.bind(on.device)?;
        // SAFETY: as `stream_synchronize`.
        check_done("cuStreamQuery", unsafe { cuStreamQuery(stream(on)) })
    }

    fn stream_wait_event(&self, on: StreamHandle, e: EventHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: both handles are live; CUDA lets a stream wait for an
        // event of another device.
        check("cuStreamWaitEvent", unsafe {
            cuStreamWaitEvent(stream(on), event(e), 0)
        })
    }

    fn stream_priority_range(&self, device: usize) -> Result<(i32, i32), DriverError> {
        self.bind(device)?;
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: writes two ints; the device's context is current.
        check("cuCtxGetStreamPriorityRange", unsafe {
            cuCtxGetStreamPriorityRange(&mut least, &mut greatest)
        })?;
        Ok((least, greatest))
    }

    unsafe fn launch_host_function(
        &self,
        on: StreamHandle,
        function: HostFunction,
        user_data: *mut c_void,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        check("cuLaunchHostFunc", unsafe {
            cuLaunchHostFunc(stream(on), function, user_data)
        })
    }

    fn status_error(&self, _device: usize, call: &'static str, code: i32) -> DriverError {
        check(call, code).err().unwrap_or_else(|| DriverError {
            call,
            code,
            name: "CUDA_SUCCESS".into(),
            description: "no error".into(),
        })
    }

    unsafe fn stream_add_callback(
        &self,
        on: StreamHandle,
        callback: CompletionCallback,
        user_data: *mut c_void,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller; the signatures are CUDA's
        // `CUstreamCallback` (a raw stream, a status, the user data).
        check("cuStreamAddCallback", unsafe {
            cuStreamAddCallback(stream(on), callback, user_data, 0)
        })
    }

    fn stream_begin_capture(&self, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        graph::begin_capture(on)
    }

    fn stream_end_capture(&self, on: StreamHandle) -> Result<GraphHandle, DriverError> {
        self.bind(on.device)?;
        graph::end_capture(on)
    }

    fn stream_capture_dependencies(
        &self,
        on: StreamHandle,
    ) -> Result<Vec<GraphNodeHandle>, DriverError> {
        self.bind(on.device)?;
        graph::capture_dependencies(on)
    }

    fn graph_nodes(
        &self,
        graph: GraphHandle,
    ) -> Result<Vec<(GraphNodeHandle, GraphNodeKind)>, DriverError> {
        self.bind(graph.device)?;
        graph::nodes(graph)
    }

    fn graph_debug_dot(&self, graph: GraphHandle, verbose: bool) -> Result<String, DriverError> {
        self.bind(graph.device)?;
        graph::debug_dot(graph, verbose)
    }

    fn graph_instantiate(&self, graph: GraphHandle) -> Result<GraphExecHandle, DriverError> {
        self.bind(graph.device)?;
        graph::instantiate(graph)
    }

    fn graph_launch(&self, exec: GraphExecHandle, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        graph::launch(exec, on)
    }

    unsafe fn graph_exec_set_kernel(
        &self,
        exec: GraphExecHandle,
        node: GraphNodeHandle,
        launch: KernelLaunch<'_>,
    ) -> Result<(), DriverError> {
        self.bind(exec.device)?;
        // SAFETY: forwarded to the caller.
        unsafe { graph::set_kernel(exec, node, launch) }
    }

    fn graph_exec_destroy(&self, exec: GraphExecHandle) -> Result<(), DriverError> {
        self.bind(exec.device)?;
        graph::destroy_exec(exec)
    }

    fn graph_destroy(&self, graph: GraphHandle) -> Result<(), DriverError> {
        self.bind(graph.device)?;
        graph::destroy(graph)
    }

    fn event_create(&self, device: usize, flags: EventFlags) -> Result<EventHandle, DriverError> {
        self.bind(device)?;
        let bits = (if flags.blocking_sync {
            EVENT_BLOCKING_SYNC
        } else {
            0
        }) | (if flags.timing {
            0
        } else {
            EVENT_DISABLE_TIMING
        }) | (if flags.interprocess {
            EVENT_INTERPROCESS
        } else {
            0
        });
        let mut e = ptr::null_mut();
        // SAFETY: writes one event handle.
        check("cuEventCreate", unsafe { cuEventCreate(&mut e, bits) })?;
        Ok(EventHandle {
            raw: e as usize,
            device,
        })
    }

    fn event_destroy(&self, e: EventHandle) -> Result<(), DriverError> {
        self.bind(e.device)?;
        // SAFETY: the event was created by `event_create` and is destroyed once.
        check("cuEventDestroy", unsafe { cuEventDestroy_v2(event(e)) })
    }

    fn event_record(&self, e: EventHandle, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: both handles are live (the driver refuses an event of
        // another device with CUDA_ERROR_INVALID_HANDLE).
        check("cuEventRecord", unsafe {
            cuEventRecord(event(e), stream(on))
        })
    }

    fn event_synchronize(&self, e: EventHandle) -> Result<(), DriverError> {
        self.bind(e.device)?;
        // SAFETY: the event is live.
        check("cuEventSynchronize", unsafe {
            cuEventSynchronize(event(e))
        })
    }

    fn event_is_done(&self, e: EventHandle) -> Result<bool, DriverError> {
        self.bind(e.device)?;
        // SAFETY: the event is live.
        check_done("cuEventQuery", unsafe { cuEventQuery(event(e)) })
    }

    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, DriverError> {
        self.bind(end.device)?;
        let mut ms = 0.0;
        // SAFETY: both events are live; writes one float.
        check("cuEventElapsedTime", unsafe {
            cuEventElapsedTime(&mut ms, event(start), event(end))
        })?;
        Ok(ms)
    }

    fn module_load(
        &self,
        device: usize,
        ptx: &CStr,
    ) -> Result<ModuleHandle, (DriverError, String)> {
        self.bind(device).map_err(|e| (e, String::new()))?;
        let mut log = vec![0u8; 16 * 1024];
        let mut options = vec![JIT_ERROR_LOG_BUFFER, JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut values = vec![log.as_mut_ptr().cast::<c_void>(), log.len() as *mut c_void];
        // PTX built with debug information (gpu-builder's first line says
        // which): the JIT compiler keeps it, as ptxas's `-lineinfo` and `-g`.
        let text = ptx.to_bytes();
        let marked = |level: &str| text.starts_with(format!("{DEBUG_MARKER}{level}\n").as_bytes());
        if marked("line-tables") || marked("full") {
            options.push(JIT_GENERATE_LINE_INFO);
            values.push(ptr::without_provenance_mut(1));
        }
        if marked("full") {
            options.push(JIT_GENERATE_DEBUG_INFO);
            values.push(ptr::without_provenance_mut(1));
        }
        let mut module = ptr::null_mut();
        // SAFETY: `ptx` is NUL-terminated; the option arrays have equal length
        // (each value an int or the log buffer, as its option takes) and the
        // log buffer outlives the call.
        let code = unsafe {
            cuModuleLoadDataEx(
                &mut module,
                ptx.as_ptr().cast(),
                options.len() as c_uint,
                options.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        check("cuModuleLoadDataEx", code)
            .map(|()| ModuleHandle {
                raw: module as usize,
                device,
            })
            .map_err(|e| {
                let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                (e, String::from_utf8_lossy(&log[..end]).trim().to_string())
            })
    }

    fn module_function(
        &self,
        module: ModuleHandle,
        name: &CStr,
    ) -> Result<FunctionHandle, DriverError> {
        self.bind(module.device)?;
        let mut f = ptr::null_mut();
        // SAFETY: the module is loaded; `name` is NUL-terminated.
        check("cuModuleGetFunction", unsafe {
            cuModuleGetFunction(&mut f, module.raw as CUmodule, name.as_ptr())
        })?;
        Ok(FunctionHandle {
            raw: f as usize,
            device: module.device,
        })
    }

    fn module_global(
        &self,
        module: ModuleHandle,
        name: &CStr,
        bytes: usize,
    ) -> Result<Option<DevicePtr>, DriverError> {
        self.bind(module.device)?;
        let (mut ptr, mut size) = (0, 0);
        // SAFETY: the module is loaded; `name` is NUL-terminated; writes a
        // device pointer and a size.
        let code = unsafe {
            cuModuleGetGlobal_v2(&mut ptr, &mut size, module.raw as CUmodule, name.as_ptr())
        };
        if code == super::status::NOT_FOUND {
            return Ok(None);
        }
        check("cuModuleGetGlobal", code)?;
        if size != bytes {
            return Err(DriverError {
                call: "cuModuleGetGlobal",
                code: super::status::INVALID_VALUE,
                name: "CUDA_ERROR_INVALID_VALUE".into(),
                description: format!(
                    "the module global `{}` has {size} bytes in the PTX, and the host expects {bytes}",
                    name.to_string_lossy()
                ),
            });
        }
        Ok(Some(ptr))
    }

    fn function_limits(&self, function: FunctionHandle) -> Result<FunctionLimits, DriverError> {
        self.bind(function.device)?;
        let attr = |a: c_int| -> Result<u32, DriverError> {
            let mut v = 0;
            // SAFETY: the function is live; writes one int.
            check("cuFuncGetAttribute", unsafe {
                cuFuncGetAttribute(&mut v, a, function.raw as CUfunction)
            })?;
            Ok(v.max(0) as u32)
        };
        use function_attribute as F;
        Ok(FunctionLimits {
            max_threads_per_block: attr(F::MAX_THREADS_PER_BLOCK)?,
            static_shared_bytes: attr(F::SHARED_SIZE_BYTES)?,
            max_dynamic_shared_bytes: attr(F::MAX_DYNAMIC_SHARED_SIZE_BYTES)?,
            local_bytes_per_thread: attr(F::LOCAL_SIZE_BYTES)?,
            registers_per_thread: attr(F::NUM_REGS)?,
        })
    }

    fn stack_bytes_per_thread(&self, device: usize) -> Result<usize, DriverError> {
        self.bind(device)?;
        let mut bytes = 0;
        // SAFETY: writes one size; the device's context is current.
        check("cuCtxGetLimit", unsafe {
            cuCtxGetLimit(&mut bytes, LIMIT_STACK_SIZE)
        })?;
        Ok(bytes)
    }

    fn resident_blocks_per_multiprocessor(
        &self,
        function: FunctionHandle,
        block_threads: u32,
        shared_bytes: u32,
    ) -> Result<u32, DriverError> {
        self.bind(function.device)?;
        let mut blocks = 0;
        // SAFETY: the function is live; writes one int.
        check("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
            cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut blocks,
                function.raw as CUfunction,
                block_threads as c_int,
                shared_bytes as usize,
            )
        })?;
        Ok(blocks.max(0) as u32)
    }

    fn set_max_dynamic_shared(
        &self,
        function: FunctionHandle,
        bytes: u32,
    ) -> Result<(), DriverError> {
        self.bind(function.device)?;
        // SAFETY: the function is live.
        check("cuFuncSetAttribute", unsafe {
            cuFuncSetAttribute(
                function.raw as CUfunction,
                function_attribute::MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as c_int,
            )
        })
    }

    unsafe fn launch(&self, launch: KernelLaunch<'_>, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        let KernelLaunch {
            function,
            grid,
            block,
            shared_bytes,
            params,
            cooperative,
            ..
        } = launch;
        if cooperative {
            // SAFETY: as below; the runtime checked that the grid fits the
            // device's resident blocks.
            return check("cuLaunchCooperativeKernel", unsafe {
                cuLaunchCooperativeKernel(
                    function.raw as CUfunction,
                    grid[0],
                    grid[1],
                    grid[2],
                    block[0],
                    block[1],
                    block[2],
                    shared_bytes,
                    stream(on),
                    params.as_mut_ptr(),
                )
            });
        }
        // SAFETY: forwarded to the caller (the driver refuses a function of
        // another device's module with CUDA_ERROR_INVALID_HANDLE).
        check("cuLaunchKernel", unsafe {
            cuLaunchKernel(
                function.raw as CUfunction,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                shared_bytes,
                stream(on),
                params.as_mut_ptr(),
                ptr::null_mut(),
            )
        })
    }

    fn comm_unique_id(&self) -> Result<[u8; UNIQUE_ID_BYTES], DriverError> {
        self.nccl_unique_id()
    }

    fn comm_init_rank(
        &self,
        device: usize,
        id: &[u8; UNIQUE_ID_BYTES],
        ranks: usize,
        rank: usize,
    ) -> Result<CommHandle, DriverError> {
        self.bind(device)?;
        self.nccl_init_rank(id, ranks, rank)
    }

    fn comm_init_all(&self, devices: &[usize]) -> Result<Vec<CommHandle>, DriverError> {
        self.nccl_init_all(devices)
    }

    fn comm_destroy(&self, comm: CommHandle) -> Result<(), DriverError> {
        self.nccl_destroy(comm)
    }

    unsafe fn collectives(&self, calls: &[Collective]) -> Result<(), DriverError> {
        // SAFETY: forwarded to the caller.
        unsafe { self.nccl_collectives(calls) }
    }
}
