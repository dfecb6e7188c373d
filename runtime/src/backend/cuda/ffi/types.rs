//! The driver's types, constants and structs the runtime uses, as `cuda.h`
//! declares them (checked against bindgen's output of `cuda.h` in
//! `bindings_check.rs`). Enumerations are plain integers here, never Rust
//! enums: a newer driver can report a value no enum here lists.

use std::ffi::{c_int, c_uint, c_void};

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
/// The driver is older than the runtime needs: the CUDA runtime API's
/// `cudaErrorInsufficientDriver` (`driver_types.h`), which the runtime
/// reports as `CUDA_ERROR_INSUFFICIENT_DRIVER`. Not a driver status:
/// `cuda.h`'s `CUresult` has no 35, so no driver status reads as this.
pub(crate) const ERROR_INSUFFICIENT_DRIVER: Status = 35;
pub(crate) const ERROR_NOT_READY: Status = 600;
/// Not a driver status: an optional function (of a newer driver than the
/// oldest supported) that this driver library lacks.
pub(crate) const ERROR_FUNCTION_MISSING: Status = super::super::super::status::FUNCTION_MISSING;

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

/// `CUtensorMap`: the 128 opaque bytes `cuTensorMapEncodeTiled` writes,
/// 64-byte aligned as the bulk copies read them.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TensorMapBytes(pub(crate) [u64; 16]);

/// `CU_TENSOR_MAP_INTERLEAVE_NONE`, `CU_TENSOR_MAP_L2_PROMOTION_L2_256B` (as CUTLASS),
/// `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE` (out-of-bounds elements are zeros).
pub(crate) const TENSOR_MAP_INTERLEAVE_NONE: c_uint = 0;
pub(crate) const TENSOR_MAP_L2_PROMOTION_256B: c_uint = 3;
pub(crate) const TENSOR_MAP_OOB_FILL_NONE: c_uint = 0;

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
/// `CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE`: every node's details.
pub(crate) const GRAPH_DEBUG_DOT_FLAGS_VERBOSE: c_uint = 1;
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

/// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`: a launch's thread-block cluster
/// shape (`cuLaunchKernelEx`).
pub(crate) const LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION: c_uint = 4;

/// `CUlaunchAttribute`: an attribute's id, padding, and its value (the
/// 64-byte union `CUlaunchAttributeValue`; a cluster dimension is its first
/// three `unsigned int`s).
#[repr(C)]
pub(crate) struct LaunchAttribute {
    pub(crate) id: c_uint,
    pub(crate) pad: [u8; 4],
    pub(crate) value: LaunchAttributeValue,
}

/// `CUlaunchAttributeValue`: 64 bytes, 8-byte aligned (its members hold
/// pointers).
#[repr(C, align(8))]
pub(crate) struct LaunchAttributeValue(pub(crate) [c_uint; 16]);

/// `CUlaunchConfig`: what `cuLaunchKernelEx` launches.
#[repr(C)]
pub(crate) struct LaunchExConfig {
    pub(crate) grid: [c_uint; 3],
    pub(crate) block: [c_uint; 3],
    pub(crate) shared_bytes: c_uint,
    pub(crate) stream: CUstream,
    pub(crate) attrs: *mut LaunchAttribute,
    pub(crate) attr_count: c_uint,
}
