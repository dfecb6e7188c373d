//! The CPU simulator behind the [`Driver`] seam: device memory in host
//! memory, streams on worker threads, kernels on coroutines.
//!
//! Handles are pointers to simulator objects (or the special stream values),
//! so the runtime above is the same for both backends.
//!
//! - memory ([`memory`]): device allocations are aligned host allocations,
//!   counted against each simulated device's capacity; frees run in stream
//!   order, as `cuMemFreeAsync`'s do;
//! - streams ([`stream`]): each stream is a worker thread running its queue of
//!   operations in order, asynchronously with the host, with CUDA's implicit
//!   synchronisation between the legacy default stream and blocking streams;
//! - events ([`event`]): completion and real timestamps, recorded in stream order;
//! - faults ([`fault`]): after a kernel fails, its device refuses every later
//!   call with that failure, as a CUDA context does after a kernel fault;
//! - kernels ([`executor`]): every thread of a block is a coroutine, so
//!   barriers and warp shuffles are real; blocks run in parallel on the
//!   cores; a [`race_check`] finds data races between threads, when asked;
//! - robustness: a [`watchdog`] fails blocks that make no progress and
//!   stream waits that can never end ([`fence`]), and
//!   [`signals`] stops threads that overflow their stack or loop without
//!   device calls; both read their [`settings`] from the environment.
//!
//! The number of simulated devices is [`DEVICES_ENV`] (default 1); each has
//! its own memory, streams and default streams.

pub(crate) mod capture;
pub(crate) mod collective;
pub(crate) mod context;
#[cfg(test)]
mod device_checks;
mod errors;
pub(crate) mod event;
pub(crate) mod executor;
pub(crate) mod fault;
pub(crate) mod fence;
pub(crate) mod globals;
pub(crate) mod graph;
pub(crate) mod managed;
pub(crate) mod memory;
pub(crate) mod peer;
mod pool;
pub(crate) mod race_check;
pub(crate) mod settings;
pub(crate) mod signals;
pub(crate) mod stream;
pub(crate) mod tensor_map;
pub(crate) mod watchdog;
pub(crate) mod worker;

use super::status;
use super::{
    Advice, Collective, CommHandle, CompletionCallback, Copy2d, DeviceLimits, DeviceProperties,
    DevicePtr, Driver, DriverError, EventFlags, EventHandle, FunctionHandle, FunctionLimits,
    GraphExecHandle, GraphHandle, GraphNodeHandle, GraphNodeKind, HostFunction, KernelLaunch,
    Location, ManagedSupport, ModuleHandle, StreamHandle, MAX_DEVICES, UNIQUE_ID_BYTES,
};
use errors::invalid_value;
use std::ffi::{c_void, CStr};
use std::sync::OnceLock;

/// The simulated devices' name.
pub(crate) const DEVICE_NAME: &str = "CPU simulator";

/// The environment variable that sets how many devices the simulator has (1 to 16).
pub const DEVICES_ENV: &str = "GPU_SIM_DEVICES";

/// The CPU simulator as a [`Driver`].
pub(crate) struct SimulatorDriver {
    devices: OnceLock<usize>,
}

impl SimulatorDriver {
    pub(crate) const fn new() -> Self {
        SimulatorDriver {
            devices: OnceLock::new(),
        }
    }

    /// An error, as CUDA's for an ordinal no device has, unless `device`
    /// is one of the simulated devices.
    fn check_device(&self, device: usize, call: &'static str) -> Result<(), DriverError> {
        if device < self.count() {
            return fault::check(device, call);
        }
        Err(invalid_value(
            call,
            format!(
                "device {device} does not exist: the simulator has {} device(s) ({DEVICES_ENV})",
                self.count()
            ),
        ))
    }

    fn count(&self) -> usize {
        *self.devices.get_or_init(|| {
            match std::env::var(DEVICES_ENV).ok().map(|v| v.trim().parse::<usize>()) {
                None => 1,
                Some(Ok(n)) if (1..=MAX_DEVICES).contains(&n) => n,
                Some(_) => {
                    crate::diagnostics::report(
                        crate::diagnostics::Level::Warn,
                        &format!("ignoring {DEVICES_ENV}: use a number from 1 to {MAX_DEVICES}; simulating 1 device"),
                    );
                    1
                }
            }
        })
    }
}

fn limits() -> DeviceLimits {
    DeviceLimits {
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 64],
        max_grid_dim: [i32::MAX as u32, 65535, 65535],
        max_shared_per_block: 48 * 1024,
        max_shared_per_block_optin: 227 * 1024,
        multiprocessor_count: executor::parallelism() as u32,
        max_threads_per_multiprocessor: 2048,
        max_registers_per_block: 65536,
        compute_capability: settings::DEFAULT_COMPUTE_CAPABILITY,
    }
}

impl Driver for SimulatorDriver {
    fn device_count(&self) -> Result<usize, DriverError> {
        Ok(self.count())
    }

    fn open(&self, ordinal: usize) -> Result<DeviceProperties, DriverError> {
        if ordinal >= self.count() {
            return Err(invalid_value(
                "cuDeviceGet",
                format!(
                    "the simulator has {} device(s) ({DEVICES_ENV})",
                    self.count()
                ),
            ));
        }
        let compute_capability = settings::compute_capability(ordinal)
            .map_err(|reason| invalid_value("cuDeviceGet", reason))?;
        Ok(DeviceProperties {
            name: DEVICE_NAME.to_string(),
            limits: DeviceLimits {
                compute_capability,
                ..limits()
            },
        })
    }

    fn synchronize_device(&self, device: usize) -> Result<(), DriverError> {
        self.check_device(device, "cuCtxSynchronize")?;
        let synchronized = stream::synchronize_device(device);
        memory::after_synchronize(device);
        synchronized
    }

    fn memory_range(
        &self,
        device: usize,
        ptr: DevicePtr,
    ) -> Result<Option<super::MemoryRange>, DriverError> {
        self.check_device(device, "cuPointerGetAttributes")?;
        Ok(memory::device_range(ptr as usize))
    }

    fn encode_tensor_map(
        &self,
        device: usize,
        map: &super::TensorMapRequest,
    ) -> Result<super::EncodedTensorMap, DriverError> {
        self.check_device(device, "cuTensorMapEncodeTiled")?;
        Ok(tensor_map::encode(map))
    }

    fn set_profiler_collection(&self, device: usize, on: bool) -> Result<(), DriverError> {
        // No profiler attaches to the simulator: the switch is recorded for
        // `profiler::is_collecting` and changes nothing else.
        self.check_device(
            device,
            if on {
                "cuProfilerStart"
            } else {
                "cuProfilerStop"
            },
        )?;
        Ok(())
    }

    fn memory_info(&self, device: usize) -> Result<(usize, usize), DriverError> {
        self.check_device(device, "cuMemGetInfo")?;
        Ok(memory::info(device, self.count()))
    }

    fn trim_memory_pool(&self, device: usize, keep: usize) -> Result<(), DriverError> {
        self.check_device(device, "cuMemPoolTrimTo")?;
        fault::check(device, "cuMemPoolTrimTo")?;
        memory::trim_pool(device, keep);
        Ok(())
    }

    fn memory_pool_usage(&self, device: usize) -> Result<(u64, u64), DriverError> {
        self.check_device(device, "cuMemPoolGetAttribute")?;
        Ok(pool::usage(device))
    }

    fn memory_pool_release_threshold(&self, device: usize) -> Result<u64, DriverError> {
        self.check_device(device, "cuMemPoolGetAttribute")?;
        Ok(pool::threshold(device))
    }

    fn set_memory_pool_release_threshold(
        &self,
        device: usize,
        bytes: u64,
    ) -> Result<(), DriverError> {
        self.check_device(device, "cuMemPoolSetAttribute")?;
        pool::set_threshold(device, bytes);
        Ok(())
    }

    fn can_access_peer(&self, _ordinal: usize, _peer: usize) -> Result<bool, DriverError> {
        Ok(peer::peers_reachable())
    }

    fn enable_peer_access(&self, device: usize, peer: usize) -> Result<(), DriverError> {
        fault::check(device, "cuCtxEnablePeerAccess")?;
        if peer::peers_reachable() {
            Ok(())
        } else {
            Err(peer::unsupported(device, peer))
        }
    }

    fn alloc_async(&self, bytes: usize, on: StreamHandle) -> Result<DevicePtr, DriverError> {
        stream::refuse_implicit(on, "cuMemAllocAsync")?;
        let device = stream::device_of(on);
        fault::check(device, "cuMemAllocAsync")?;
        if stream::membership(on).is_none() {
            return memory::pool_alloc(bytes, device, self.count(), on);
        }
        // In a capture the memory belongs to the graph, released with it.
        let ptr = memory::alloc(bytes, device, self.count())?;
        if let Some(capture) = stream::capture_marker(on, GraphNodeKind::MemAlloc) {
            capture.own_memory(ptr, Box::new(move || memory::free_now(ptr)));
        }
        Ok(ptr)
    }

    unsafe fn free_async(&self, ptr: DevicePtr, on: StreamHandle) -> Result<(), DriverError> {
        // After a fault the memory is kept: a kernel still running on
        // another stream may use it.
        fault::check(stream::device_of(on), "cuMemFreeAsync")?;
        // SAFETY: forwarded to the caller.
        unsafe { memory::free_async(ptr, on) }
    }

    fn managed_support(&self, device: usize) -> Result<ManagedSupport, DriverError> {
        self.check_device(device, "cuDeviceGetAttribute")?;
        Ok(managed::support())
    }

    fn alloc_managed(&self, device: usize, bytes: usize) -> Result<DevicePtr, DriverError> {
        self.check_device(device, "cuMemAllocManaged")?;
        if !managed::support().managed {
            return Err(DriverError {
                call: "cuMemAllocManaged",
                code: status::NOT_SUPPORTED,
                name: "CUDA_ERROR_NOT_SUPPORTED".into(),
                description: "the simulated device has no managed memory".into(),
            });
        }
        memory::managed_alloc(bytes, device, self.count())
    }

    fn alloc_pitch(
        &self,
        device: usize,
        width_bytes: usize,
        rows: usize,
        element_bytes: u32,
    ) -> Result<(DevicePtr, usize), DriverError> {
        self.check_device(device, "cuMemAllocPitch")?;
        if width_bytes == 0 || rows == 0 || ![4, 8, 16].contains(&element_bytes) {
            return Err(invalid_value(
                "cuMemAllocPitch",
                format!("{rows} rows of {width_bytes} bytes with elements of {element_bytes} bytes (4, 8 or 16)"),
            ));
        }
        memory::pitch_alloc(width_bytes, rows, device, self.count())
    }

    unsafe fn free_now(&self, device: usize, ptr: DevicePtr) -> Result<(), DriverError> {
        // After a fault the memory is kept: work still running may use it.
        fault::check(device, "cuMemFree")?;
        memory::free_allocation(ptr)
    }

    unsafe fn prefetch_async(
        &self,
        ptr: DevicePtr,
        bytes: usize,
        to: Location,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        managed::prefetch(ptr, bytes, to, on, self.count())
    }

    unsafe fn advise(
        &self,
        device: usize,
        ptr: DevicePtr,
        bytes: usize,
        advice: Advice,
        _set: bool,
    ) -> Result<(), DriverError> {
        self.check_device(device, "cuMemAdvise")?;
        managed::advise(ptr, bytes, advice, self.count())
    }

    unsafe fn copy_2d_async(&self, copy: &Copy2d, on: StreamHandle) -> Result<(), DriverError> {
        // SAFETY: forwarded to the caller.
        unsafe { managed::copy_2d(copy, on) }
    }

    fn host_alloc(
        &self,
        device: usize,
        bytes: usize,
        _mapped: bool,
    ) -> Result<*mut u8, DriverError> {
        self.check_device(device, "cuMemHostAlloc")?;
        memory::host_alloc(bytes)
    }

    fn host_device_pointer(&self, device: usize, ptr: *mut u8) -> Result<DevicePtr, DriverError> {
        fault::check(device, "cuMemHostGetDevicePointer")?;
        // Every simulated device reaches host memory at its host address.
        memory::host_device_pointer(ptr)
    }

    unsafe fn host_free(&self, device: usize, ptr: *mut u8) -> Result<(), DriverError> {
        // After a fault the memory is kept: a copy still running may use it.
        fault::check(device, "cuMemFreeHost")?;
        // SAFETY: forwarded to the caller.
        unsafe { memory::host_free(ptr) }
    }

    unsafe fn memset_async(
        &self,
        dst: DevicePtr,
        value: u8,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        stream::check_device(on, "cuMemsetD8Async")?;
        // SAFETY: forwarded to the caller.
        unsafe { memory::memset(dst, value, bytes, on) }
    }

    unsafe fn copy_to_device_async(
        &self,
        dst: DevicePtr,
        src: *const u8,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        stream::check_device(on, "cuMemcpyHtoDAsync")?;
        // SAFETY: forwarded to the caller.
        unsafe { memory::copy_to_device(dst, src, bytes, on) }
    }

    unsafe fn copy_to_host_async(
        &self,
        dst: *mut u8,
        src: DevicePtr,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        stream::check_device(on, "cuMemcpyDtoHAsync")?;
        // SAFETY: forwarded to the caller.
        unsafe { memory::copy(dst as DevicePtr, src, bytes, on) }
    }

    unsafe fn copy_device_async(
        &self,
        dst: DevicePtr,
        src: DevicePtr,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        stream::check_device(on, "cuMemcpyDtoDAsync")?;
        // SAFETY: forwarded to the caller.
        unsafe { memory::copy(dst, src, bytes, on) }
    }

    unsafe fn copy_peer_async(
        &self,
        dst: DevicePtr,
        _dst_device: usize,
        src: DevicePtr,
        _src_device: usize,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        stream::check_device(on, "cuMemcpyPeerAsync")?;
        // All simulated device memory is host memory.
        // SAFETY: forwarded to the caller.
        unsafe { memory::copy(dst, src, bytes, on) }
    }

    fn stream_create(
        &self,
        device: usize,
        non_blocking: bool,
        priority: i32,
    ) -> Result<StreamHandle, DriverError> {
        self.check_device(device, "cuStreamCreateWithPriority")?;
        Ok(stream::create(device, !non_blocking, priority))
    }

    fn stream_properties(&self, on: StreamHandle) -> Result<(bool, i32), DriverError> {
        Ok(stream::properties(on))
    }

    fn stream_destroy(&self, on: StreamHandle) -> Result<(), DriverError> {
        stream::destroy(on);
        Ok(())
    }

    fn stream_synchronize(&self, on: StreamHandle) -> Result<(), DriverError> {
        stream::synchronize(on)?;
        memory::after_synchronize(stream::device_of(on));
        Ok(())
    }

    fn stream_is_done(&self, on: StreamHandle) -> Result<bool, DriverError> {
        stream::is_idle(on)
    }

    fn stream_wait_event(&self, on: StreamHandle, e: EventHandle) -> Result<(), DriverError> {
        event::stream_wait(on, e)
    }

    fn stream_priority_range(&self, device: usize) -> Result<(i32, i32), DriverError> {
        fault::check(device, "cuCtxGetStreamPriorityRange")?;
        Ok((0, -5))
    }

    unsafe fn launch_host_function(
        &self,
        on: StreamHandle,
        function: HostFunction,
        user_data: *mut c_void,
    ) -> Result<(), DriverError> {
        stream::check_device(on, "cuLaunchHostFunc")?;
        let data = user_data as usize;
        stream::enqueue(
            on,
            Box::new(move || {
                // SAFETY: the caller guarantees `function` may be called once
                // with `user_data` on another thread.
                unsafe { function(data as *mut c_void) };
                Ok(())
            }),
        )
    }

    fn status_error(&self, device: usize, call: &'static str, code: i32) -> DriverError {
        // The device's fault, as every later call reports it.
        if let Some(fault) = fault::error(device, call) {
            return fault;
        }
        errors::launch_failed(
            call,
            format!(
                "work on the stream failed (status {code}); its synchronize reports which and why"
            ),
        )
    }

    unsafe fn stream_add_callback(
        &self,
        on: StreamHandle,
        callback: CompletionCallback,
        user_data: *mut c_void,
    ) -> Result<(), DriverError> {
        stream::check_device(on, "cuStreamAddCallback")?;
        let data = user_data as usize;
        let raw = on.raw;
        stream::enqueue_reporting(
            on,
            Box::new(move |failed| {
                // The device's fault, or a failure since the stream's last
                // synchronize, is passed on as CUDA passes a device error on
                // to later callbacks.
                let status = if failed { status::LAUNCH_FAILED } else { 0 };
                // SAFETY: the caller guarantees `callback` may be called once
                // with `user_data` on another thread.
                unsafe { callback(raw as *mut c_void, status, data as *mut c_void) };
            }),
        )
    }

    fn stream_begin_capture(&self, on: StreamHandle) -> Result<(), DriverError> {
        stream::check_device(on, "cuStreamBeginCapture")?;
        stream::begin_capture(on)
    }

    fn stream_end_capture(&self, on: StreamHandle) -> Result<GraphHandle, DriverError> {
        stream::end_capture(on).map(|capture| graph::from_capture(capture, on.device))
    }

    fn stream_capture_dependencies(
        &self,
        on: StreamHandle,
    ) -> Result<Vec<GraphNodeHandle>, DriverError> {
        Ok(stream::membership(on)
            .map(|m| m.tail.into_iter().map(GraphNodeHandle).collect())
            .unwrap_or_default())
    }

    fn graph_nodes(
        &self,
        graph: GraphHandle,
    ) -> Result<Vec<(GraphNodeHandle, GraphNodeKind)>, DriverError> {
        Ok(graph::nodes(graph))
    }

    fn graph_debug_dot(&self, graph: GraphHandle, verbose: bool) -> Result<String, DriverError> {
        Ok(graph::debug_dot(graph, verbose))
    }

    fn graph_instantiate(&self, graph: GraphHandle) -> Result<GraphExecHandle, DriverError> {
        fault::check(graph.device, "cuGraphInstantiate")?;
        Ok(graph::instantiate(graph))
    }

    fn graph_launch(&self, exec: GraphExecHandle, on: StreamHandle) -> Result<(), DriverError> {
        stream::check_device(on, "cuGraphLaunch")?;
        graph::launch(exec, on)
    }

    unsafe fn graph_exec_set_kernel(
        &self,
        exec: GraphExecHandle,
        node: GraphNodeHandle,
        launch: KernelLaunch<'_>,
    ) -> Result<(), DriverError> {
        fault::check(exec.device, "cuGraphExecKernelNodeSetParams")?;
        // SAFETY: forwarded to the caller.
        unsafe { graph::set_kernel(exec, node, launch) }
    }

    fn graph_exec_destroy(&self, exec: GraphExecHandle) -> Result<(), DriverError> {
        graph::destroy_exec(exec);
        Ok(())
    }

    fn graph_destroy(&self, graph: GraphHandle) -> Result<(), DriverError> {
        graph::destroy(graph);
        Ok(())
    }

    fn event_create(&self, device: usize, _flags: EventFlags) -> Result<EventHandle, DriverError> {
        self.check_device(device, "cuEventCreate")?;
        Ok(event::create(device))
    }

    fn event_destroy(&self, e: EventHandle) -> Result<(), DriverError> {
        event::destroy(e);
        Ok(())
    }

    fn event_record(&self, e: EventHandle, on: StreamHandle) -> Result<(), DriverError> {
        event::record(e, on)
    }

    fn event_synchronize(&self, e: EventHandle) -> Result<(), DriverError> {
        event::synchronize(e)?;
        memory::after_synchronize(e.device);
        Ok(())
    }

    fn event_is_done(&self, e: EventHandle) -> Result<bool, DriverError> {
        event::is_done(e)
    }

    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, DriverError> {
        event::elapsed_ms(start, end)
    }

    fn module_load(
        &self,
        device: usize,
        _ptx: &CStr,
    ) -> Result<ModuleHandle, (DriverError, String)> {
        self.check_device(device, "cuModuleLoadDataEx")
            .map_err(|e| (e, String::new()))?;
        // Kernels run from their host entry points; the PTX is not needed.
        // The module is its globals (`globals`), which its launches reach.
        Ok(ModuleHandle {
            raw: globals::load(device, self.count()),
            device,
        })
    }

    fn module_function(
        &self,
        module: ModuleHandle,
        _name: &CStr,
    ) -> Result<FunctionHandle, DriverError> {
        fault::check(module.device, "cuModuleGetFunction")?;
        // A function names its module: a launch of it reaches the
        // module's globals.
        Ok(FunctionHandle {
            raw: module.raw,
            device: module.device,
        })
    }

    fn module_global(
        &self,
        module: ModuleHandle,
        name: &CStr,
        bytes: usize,
    ) -> Result<Option<DevicePtr>, DriverError> {
        fault::check(module.device, "cuModuleGetGlobal")?;
        let globals = globals::of(module.raw).ok_or_else(|| {
            invalid_value(
                "cuModuleGetGlobal",
                format!("{module:?} is not a loaded module"),
            )
        })?;
        globals.get(&name.to_string_lossy(), bytes).map(Some)
    }

    fn function_limits(&self, function: FunctionHandle) -> Result<FunctionLimits, DriverError> {
        fault::check(function.device, "cuFuncGetAttribute")?;
        Ok(FunctionLimits {
            max_threads_per_block: 1024,
            static_shared_bytes: 0,
            max_dynamic_shared_bytes: 48 * 1024,
            // Unknown here: local arrays live on the simulated thread's
            // stack (`stack_bytes_per_thread`), which a launch overflows
            // with a report rather than being refused.
            local_bytes_per_thread: 0,
            registers_per_thread: 0,
        })
    }

    fn stack_bytes_per_thread(&self, device: usize) -> Result<usize, DriverError> {
        self.check_device(device, "cuCtxGetLimit")?;
        settings::settings()
            .map(|s| s.stack_bytes)
            .map_err(|e| invalid_value("cuCtxGetLimit", e))
    }

    fn resident_blocks_per_multiprocessor(
        &self,
        _function: FunctionHandle,
        block_threads: u32,
        shared_bytes: u32,
    ) -> Result<u32, DriverError> {
        // An H100's multiprocessor: 32 blocks, 2048 threads, 228 KiB of
        // shared memory (the simulator runs one OS thread per block of a
        // cooperative launch, `executor`).
        let by_threads = 2048 / block_threads.max(1);
        let by_shared = (228 * 1024u32)
            .checked_div(shared_bytes)
            .unwrap_or(u32::MAX);
        Ok(32.min(by_threads).min(by_shared))
    }

    fn set_max_dynamic_shared(
        &self,
        function: FunctionHandle,
        _bytes: u32,
    ) -> Result<(), DriverError> {
        fault::check(function.device, "cuFuncSetAttribute")
    }

    unsafe fn launch(&self, launch: KernelLaunch<'_>, on: StreamHandle) -> Result<(), DriverError> {
        fault::check(stream::device_of(on), "cuLaunchKernel")?;
        // SAFETY: forwarded to the caller.
        unsafe { executor::launch(launch, on) }
    }

    fn comm_unique_id(&self) -> Result<[u8; UNIQUE_ID_BYTES], DriverError> {
        Ok(collective::unique_id())
    }

    fn comm_init_rank(
        &self,
        device: usize,
        id: &[u8; UNIQUE_ID_BYTES],
        ranks: usize,
        rank: usize,
    ) -> Result<CommHandle, DriverError> {
        self.check_device(device, "ncclCommInitRank")?;
        collective::init_rank(device, id, ranks, rank)
    }

    fn comm_init_all(&self, devices: &[usize]) -> Result<Vec<CommHandle>, DriverError> {
        for &device in devices {
            fault::check(device, "ncclCommInitAll")?;
        }
        Ok(collective::init_all(devices))
    }

    fn comm_destroy(&self, comm: CommHandle) -> Result<(), DriverError> {
        collective::destroy(comm);
        Ok(())
    }

    unsafe fn collectives(&self, calls: &[Collective]) -> Result<(), DriverError> {
        for call in calls {
            stream::check_device(call.stream, "ncclGroupEnd")?;
        }
        // SAFETY: forwarded to the caller.
        unsafe { collective::queue(calls) }
    }
}
