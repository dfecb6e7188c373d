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
//!
//! Each [`Driver`] method below binds the context of the device it acts on
//! and hands the call to the module of its concept, as the simulator is split.

#[cfg(test)]
mod bindings_check;
mod call;
mod context;
mod copies;
mod device;
mod event;
mod ffi;
mod graph;
mod launch;
mod managed;
mod memory;
mod module;
mod nccl;
mod peer;
mod pointer;
mod pool;
mod stream;
mod tensor_map;

pub use ffi::MIN_DRIVER_VERSION;
pub use nccl::NCCL_LIBRARY_ENV;

use super::{
    Advice, Collective, CommHandle, CompletionCallback, Copy2d, DeviceProperties, DevicePtr,
    Driver, DriverError, EventFlags, EventHandle, FunctionHandle, FunctionLimits, GraphExecHandle,
    GraphHandle, GraphNodeHandle, GraphNodeKind, HostFunction, KernelLaunch, Location,
    ManagedSupport, ModuleHandle, StreamHandle, UNIQUE_ID_BYTES,
};
pub(crate) use context::CudaDriver;
use ffi::*;
use std::ffi::{c_void, CStr};

impl Driver for CudaDriver {
    fn device_count(&self) -> Result<usize, DriverError> {
        self.init()?;
        device::count()
    }

    fn open(&self, ordinal: usize) -> Result<DeviceProperties, DriverError> {
        self.init()?;
        self.open_device(ordinal)
    }

    fn synchronize_device(&self, device: usize) -> Result<(), DriverError> {
        self.bind(device)?;
        device::synchronize()
    }

    fn memory_range(
        &self,
        device: usize,
        ptr: DevicePtr,
    ) -> Result<Option<super::MemoryRange>, DriverError> {
        self.bind(device)?;
        Ok(pointer::memory_range(ptr))
    }

    fn encode_tensor_map(
        &self,
        device: usize,
        map: &super::TensorMapRequest,
    ) -> Result<super::EncodedTensorMap, DriverError> {
        self.bind(device)?;
        tensor_map::encode(map)
    }

    fn set_profiler_collection(&self, device: usize, on: bool) -> Result<(), DriverError> {
        self.bind(device)?;
        pointer::set_profiler_collection(on)
    }

    fn memory_info(&self, device: usize) -> Result<(usize, usize), DriverError> {
        self.bind(device)?;
        memory::info()
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
        memory::alloc_async(bytes, on)
    }

    unsafe fn free_async(&self, ptr: DevicePtr, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        unsafe { memory::free_async(ptr, on) }
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
        memory::host_alloc(bytes, mapped)
    }

    fn host_device_pointer(&self, device: usize, ptr: *mut u8) -> Result<DevicePtr, DriverError> {
        self.bind(device)?;
        memory::host_device_pointer(ptr)
    }

    unsafe fn host_free(&self, device: usize, ptr: *mut u8) -> Result<(), DriverError> {
        self.bind(device)?;
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
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        unsafe { copies::memset_async(dst, value, bytes, on) }
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
        unsafe { copies::to_device_async(dst, src, bytes, on) }
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
        unsafe { copies::to_host_async(dst, src, bytes, on) }
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
        unsafe { copies::device_async(dst, src, bytes, on) }
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
        stream::create(device, non_blocking, priority)
    }

    fn stream_properties(&self, on: StreamHandle) -> Result<(bool, i32), DriverError> {
        self.bind(on.device)?;
        stream::properties(on)
    }

    fn stream_destroy(&self, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        stream::destroy(on)
    }

    fn stream_synchronize(&self, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        stream::synchronize(on)
    }

    fn stream_is_done(&self, on: StreamHandle) -> Result<bool, DriverError> {
        self.bind(on.device)?;
        stream::is_done(on)
    }

    fn stream_wait_event(&self, on: StreamHandle, e: EventHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        stream::wait_event(on, e)
    }

    fn stream_priority_range(&self, device: usize) -> Result<(i32, i32), DriverError> {
        self.bind(device)?;
        stream::priority_range()
    }

    unsafe fn launch_host_function(
        &self,
        on: StreamHandle,
        function: HostFunction,
        user_data: *mut c_void,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        unsafe { stream::launch_host_function(on, function, user_data) }
    }

    fn status_error(&self, _device: usize, call: &'static str, code: i32) -> DriverError {
        call::status_error(call, code)
    }

    unsafe fn stream_add_callback(
        &self,
        on: StreamHandle,
        callback: CompletionCallback,
        user_data: *mut c_void,
    ) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        unsafe { stream::add_callback(on, callback, user_data) }
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
        event::create(device, flags)
    }

    fn event_destroy(&self, e: EventHandle) -> Result<(), DriverError> {
        self.bind(e.device)?;
        event::destroy(e)
    }

    fn event_record(&self, e: EventHandle, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        event::record(e, on)
    }

    fn event_synchronize(&self, e: EventHandle) -> Result<(), DriverError> {
        self.bind(e.device)?;
        event::synchronize(e)
    }

    fn event_is_done(&self, e: EventHandle) -> Result<bool, DriverError> {
        self.bind(e.device)?;
        event::is_done(e)
    }

    fn event_elapsed_ms(&self, start: EventHandle, end: EventHandle) -> Result<f32, DriverError> {
        self.bind(end.device)?;
        event::elapsed_ms(start, end)
    }

    fn module_load(
        &self,
        device: usize,
        ptx: &CStr,
    ) -> Result<ModuleHandle, (DriverError, String)> {
        self.bind(device).map_err(|e| (e, String::new()))?;
        module::load(device, ptx)
    }

    fn module_function(
        &self,
        module: ModuleHandle,
        name: &CStr,
    ) -> Result<FunctionHandle, DriverError> {
        self.bind(module.device)?;
        module::function(module, name)
    }

    fn module_global(
        &self,
        module: ModuleHandle,
        name: &CStr,
        bytes: usize,
    ) -> Result<Option<DevicePtr>, DriverError> {
        self.bind(module.device)?;
        module::global(module, name, bytes)
    }

    fn function_limits(&self, function: FunctionHandle) -> Result<FunctionLimits, DriverError> {
        self.bind(function.device)?;
        module::function_limits(function)
    }

    fn stack_bytes_per_thread(&self, device: usize) -> Result<usize, DriverError> {
        self.bind(device)?;
        device::stack_bytes_per_thread()
    }

    fn resident_blocks_per_multiprocessor(
        &self,
        function: FunctionHandle,
        block_threads: u32,
        shared_bytes: u32,
    ) -> Result<u32, DriverError> {
        self.bind(function.device)?;
        module::resident_blocks_per_multiprocessor(function, block_threads, shared_bytes)
    }

    fn set_max_dynamic_shared(
        &self,
        function: FunctionHandle,
        bytes: u32,
    ) -> Result<(), DriverError> {
        self.bind(function.device)?;
        module::set_max_dynamic_shared(function, bytes)
    }

    unsafe fn launch(&self, launch: KernelLaunch<'_>, on: StreamHandle) -> Result<(), DriverError> {
        self.bind(on.device)?;
        // SAFETY: forwarded to the caller.
        unsafe { launch::launch(launch, on) }
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
