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
//! - kernels ([`executor`]): every thread of a block is a coroutine, so
//!   barriers and warp shuffles are real; blocks run in parallel on the
//!   cores; a [`race_check`] finds data races between threads, when asked;
//! - robustness: a [`watchdog`] fails blocks that make no progress, and
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
pub(crate) mod globals;
pub(crate) mod graph;
pub(crate) mod memory;
pub(crate) mod peer;
pub(crate) mod race_check;
pub(crate) mod settings;
pub(crate) mod signals;
pub(crate) mod stream;
pub(crate) mod watchdog;
pub(crate) mod worker;

use super::status;
use super::{
    Collective, CommHandle, CompletionCallback, DeviceLimits, DeviceProperties, DevicePtr, Driver,
    DriverError, EventFlags, EventHandle, FunctionHandle, FunctionLimits, GraphExecHandle,
    GraphHandle, GraphNodeHandle, GraphNodeKind, HostFunction, KernelLaunch, ModuleHandle,
    StreamHandle, MAX_DEVICES, UNIQUE_ID_BYTES,
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
            return Ok(());
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
                    eprintln!(
                        "gpu-runtime: ignoring {DEVICES_ENV}: use a number from 1 to {MAX_DEVICES}; simulating 1 device"
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
        compute_capability: (9, 0),
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
        Ok(DeviceProperties {
            name: DEVICE_NAME.to_string(),
            limits: limits(),
        })
    }

    fn synchronize_device(&self, device: usize) -> Result<(), DriverError> {
        self.check_device(device, "cuCtxSynchronize")?;
        stream::synchronize_device(device)
    }

    fn memory_info(&self, device: usize) -> Result<(usize, usize), DriverError> {
        self.check_device(device, "cuMemGetInfo")?;
        Ok(memory::info(device, self.count()))
    }

    fn trim_memory_pool(&self, _device: usize) -> Result<(), DriverError> {
        // Freed memory goes straight back to the host allocator.
        Ok(())
    }

    fn can_access_peer(&self, _ordinal: usize, _peer: usize) -> Result<bool, DriverError> {
        Ok(peer::peers_reachable())
    }

    fn enable_peer_access(&self, device: usize, peer: usize) -> Result<(), DriverError> {
        if peer::peers_reachable() {
            Ok(())
        } else {
            Err(peer::unsupported(device, peer))
        }
    }

    fn alloc_async(&self, bytes: usize, on: StreamHandle) -> Result<DevicePtr, DriverError> {
        let device = stream::device_of(on);
        let ptr = memory::alloc(bytes, device, self.count())?;
        // In a capture the memory belongs to the graph, released with it.
        if let Some(capture) = stream::capture_marker(on, GraphNodeKind::MemAlloc) {
            capture.own_memory(ptr, Box::new(move || memory::free_now(ptr)));
        }
        Ok(ptr)
    }

    unsafe fn free_async(&self, ptr: DevicePtr, on: StreamHandle) -> Result<(), DriverError> {
        // SAFETY: forwarded to the caller.
        unsafe { memory::free_async(ptr, on) }
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

    fn host_device_pointer(&self, _device: usize, ptr: *mut u8) -> Result<DevicePtr, DriverError> {
        // Every simulated device reaches host memory at its host address.
        memory::host_device_pointer(ptr)
    }

    unsafe fn host_free(&self, _device: usize, ptr: *mut u8) -> Result<(), DriverError> {
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
        stream::synchronize(on)
    }

    fn stream_is_done(&self, on: StreamHandle) -> Result<bool, DriverError> {
        stream::is_idle(on)
    }

    fn stream_wait_event(&self, on: StreamHandle, e: EventHandle) -> Result<(), DriverError> {
        event::stream_wait(on, e)
    }

    fn stream_priority_range(&self, _device: usize) -> Result<(i32, i32), DriverError> {
        Ok((0, -5))
    }

    unsafe fn launch_host_function(
        &self,
        on: StreamHandle,
        function: HostFunction,
        user_data: *mut c_void,
    ) -> Result<(), DriverError> {
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

    fn status_error(&self, call: &'static str, code: i32) -> DriverError {
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
        let data = user_data as usize;
        let raw = on.raw;
        stream::enqueue_reporting(
            on,
            Box::new(move |failed| {
                // A failure since the stream's last synchronize is passed on
                // as CUDA passes a device error on to later callbacks.
                let status = if failed { status::LAUNCH_FAILED } else { 0 };
                // SAFETY: the caller guarantees `callback` may be called once
                // with `user_data` on another thread.
                unsafe { callback(raw as *mut c_void, status, data as *mut c_void) };
            }),
        )
    }

    fn stream_begin_capture(&self, on: StreamHandle) -> Result<(), DriverError> {
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

    fn graph_instantiate(&self, graph: GraphHandle) -> Result<GraphExecHandle, DriverError> {
        Ok(graph::instantiate(graph))
    }

    fn graph_launch(&self, exec: GraphExecHandle, on: StreamHandle) -> Result<(), DriverError> {
        graph::launch(exec, on)
    }

    unsafe fn graph_exec_set_kernel(
        &self,
        exec: GraphExecHandle,
        node: GraphNodeHandle,
        launch: KernelLaunch<'_>,
    ) -> Result<(), DriverError> {
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
        event::synchronize(e)
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
        let globals = globals::of(module.raw).ok_or_else(|| {
            invalid_value(
                "cuModuleGetGlobal",
                format!("{module:?} is not a loaded module"),
            )
        })?;
        globals.get(&name.to_string_lossy(), bytes).map(Some)
    }

    fn function_limits(&self, _function: FunctionHandle) -> Result<FunctionLimits, DriverError> {
        Ok(FunctionLimits {
            max_threads_per_block: 1024,
            static_shared_bytes: 0,
            max_dynamic_shared_bytes: 48 * 1024,
        })
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
        _function: FunctionHandle,
        _bytes: u32,
    ) -> Result<(), DriverError> {
        Ok(())
    }

    unsafe fn launch(&self, launch: KernelLaunch<'_>, on: StreamHandle) -> Result<(), DriverError> {
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
        Ok(collective::init_all(devices))
    }

    fn comm_destroy(&self, comm: CommHandle) -> Result<(), DriverError> {
        collective::destroy(comm);
        Ok(())
    }

    unsafe fn collectives(&self, calls: &[Collective]) -> Result<(), DriverError> {
        // SAFETY: forwarded to the caller.
        unsafe { collective::queue(calls) }
    }
}
