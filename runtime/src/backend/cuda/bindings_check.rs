//! The hand-written driver and NCCL declarations (`ffi/`, `nccl.rs`) checked
//! against cudarc's `sys` modules, bindgen's output of NVIDIA's `cuda.h`
//! (CUDA 12.8) and `nccl.h` (NCCL 2.30): every constant's value, every
//! struct's size and field offsets, every function's name and the sizes of
//! its arguments. cudarc is a dev-dependency only; `ffi/mod.rs` says why
//! the runtime does not call through it.

use super::super::status;
use super::ffi::{self, *};
use cudarc::driver::sys;
use std::mem::{align_of, offset_of, size_of};

/// Asserts that each pair of values is equal, naming the first of a pair
/// that is not.
macro_rules! same_values {
    ($($ours:expr => $theirs:expr,)*) => {
        $(assert_eq!(
            $ours as i64,
            $theirs as i64,
            "{} is not {}",
            stringify!($ours),
            stringify!($theirs)
        );)*
    };
}

/// Asserts that two structs have the same size, alignment and field offsets.
macro_rules! same_layout {
    ($ours:ty, $theirs:ty { $($field:ident => $their_field:ident),* $(,)? }) => {
        assert_eq!(size_of::<$ours>(), size_of::<$theirs>(), "size of {}", stringify!($ours));
        assert_eq!(align_of::<$ours>(), align_of::<$theirs>(), "alignment of {}", stringify!($ours));
        $(assert_eq!(
            offset_of!($ours, $field),
            offset_of!($theirs, $their_field),
            "offset of {}.{}",
            stringify!($ours),
            stringify!($field)
        );)*
    };
}

#[test]
fn every_driver_function_takes_arguments_of_the_sizes_cuda_h_declares() {
    let functions = ffi::argument_sizes();
    assert!(functions.len() > 70, "{} functions", functions.len());
    for (name, ours, theirs) in functions {
        assert_eq!(ours, theirs, "the argument sizes of {name}");
    }
}

#[test]
fn handle_and_status_types_have_the_sizes_cuda_h_declares() {
    assert_eq!(size_of::<Status>(), size_of::<sys::CUresult>());
    assert_eq!(size_of::<CUdevice>(), size_of::<sys::CUdevice>());
    assert_eq!(size_of::<CUdeviceptr>(), size_of::<sys::CUdeviceptr>());
    assert_eq!(size_of::<CUcontext>(), size_of::<sys::CUcontext>());
    assert_eq!(size_of::<CUstream>(), size_of::<sys::CUstream>());
    assert_eq!(size_of::<CUgraphNode>(), size_of::<sys::CUgraphNode>());
    assert_eq!(
        size_of::<StreamCallback>(),
        size_of::<sys::CUstreamCallback>()
    );
}

#[test]
fn driver_constants_have_the_values_cuda_h_declares() {
    use sys::CUdevice_attribute as A;
    use sys::CUfunction_attribute as F;
    use sys::CUgraphNodeType as N;
    use sys::CUjit_option as J;
    use sys::CUmemPool_attribute as P;
    use sys::CUpointer_attribute as Ptr;
    use sys::CUresult as R;
    same_values! {
        SUCCESS => R::CUDA_SUCCESS,
        LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION => sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
        ERROR_NOT_INITIALIZED => R::CUDA_ERROR_NOT_INITIALIZED,
        ERROR_NOT_READY => R::CUDA_ERROR_NOT_READY,
        device_attribute::MAX_THREADS_PER_BLOCK => A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        device_attribute::MAX_BLOCK_DIM_X => A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
        device_attribute::MAX_BLOCK_DIM_Y => A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
        device_attribute::MAX_BLOCK_DIM_Z => A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
        device_attribute::MAX_GRID_DIM_X => A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
        device_attribute::MAX_GRID_DIM_Y => A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
        device_attribute::MAX_GRID_DIM_Z => A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
        device_attribute::MAX_SHARED_MEMORY_PER_BLOCK => A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        device_attribute::MAX_REGISTERS_PER_BLOCK => A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
        device_attribute::MULTIPROCESSOR_COUNT => A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        device_attribute::MAX_THREADS_PER_MULTIPROCESSOR => A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        device_attribute::COMPUTE_CAPABILITY_MAJOR => A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        device_attribute::COMPUTE_CAPABILITY_MINOR => A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
        device_attribute::MAX_SHARED_MEMORY_PER_BLOCK_OPTIN => A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        device_attribute::MANAGED_MEMORY => A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY,
        device_attribute::CONCURRENT_MANAGED_ACCESS => A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS,
        function_attribute::MAX_THREADS_PER_BLOCK => F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        function_attribute::SHARED_SIZE_BYTES => F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
        function_attribute::LOCAL_SIZE_BYTES => F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
        function_attribute::NUM_REGS => F::CU_FUNC_ATTRIBUTE_NUM_REGS,
        function_attribute::MAX_DYNAMIC_SHARED_SIZE_BYTES => F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        LIMIT_STACK_SIZE => sys::CUlimit::CU_LIMIT_STACK_SIZE,
        JIT_ERROR_LOG_BUFFER => J::CU_JIT_ERROR_LOG_BUFFER,
        JIT_ERROR_LOG_BUFFER_SIZE_BYTES => J::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        JIT_GENERATE_DEBUG_INFO => J::CU_JIT_GENERATE_DEBUG_INFO,
        JIT_GENERATE_LINE_INFO => J::CU_JIT_GENERATE_LINE_INFO,
        POINTER_ATTRIBUTE_MEMORY_TYPE => Ptr::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
        POINTER_ATTRIBUTE_DEVICE_ORDINAL => Ptr::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        POINTER_ATTRIBUTE_RANGE_START_ADDR => Ptr::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
        POINTER_ATTRIBUTE_RANGE_SIZE => Ptr::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
        STREAM_NON_BLOCKING => sys::CUstream_flags::CU_STREAM_NON_BLOCKING,
        EVENT_BLOCKING_SYNC => sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC,
        EVENT_DISABLE_TIMING => sys::CUevent_flags::CU_EVENT_DISABLE_TIMING,
        EVENT_INTERPROCESS => sys::CUevent_flags::CU_EVENT_INTERPROCESS,
        HOST_ALLOC_PORTABLE => sys::CU_MEMHOSTALLOC_PORTABLE,
        HOST_ALLOC_DEVICE_MAP => sys::CU_MEMHOSTALLOC_DEVICEMAP,
        MEM_LOCATION_TYPE_DEVICE => sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        MEM_LOCATION_TYPE_HOST => sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
        MEM_ATTACH_GLOBAL => sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL,
        mem_advise::SET_READ_MOSTLY => sys::CUmem_advise::CU_MEM_ADVISE_SET_READ_MOSTLY,
        mem_advise::SET_PREFERRED_LOCATION => sys::CUmem_advise::CU_MEM_ADVISE_SET_PREFERRED_LOCATION,
        mem_advise::SET_ACCESSED_BY => sys::CUmem_advise::CU_MEM_ADVISE_SET_ACCESSED_BY,
        MEMORYTYPE_HOST => sys::CUmemorytype::CU_MEMORYTYPE_HOST,
        MEMORYTYPE_DEVICE => sys::CUmemorytype::CU_MEMORYTYPE_DEVICE,
        MEMORYTYPE_UNIFIED => sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED,
        MEM_ACCESS_FLAGS_PROT_READWRITE => sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES => P::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
        MEMPOOL_ATTR_RELEASE_THRESHOLD => P::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
        MEMPOOL_ATTR_RESERVED_MEM_CURRENT => P::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT,
        MEMPOOL_ATTR_USED_MEM_CURRENT => P::CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
        STREAM_CAPTURE_MODE_RELAXED => sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED,
        STREAM_CAPTURE_STATUS_ACTIVE => sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE,
        graph_node_type::KERNEL => N::CU_GRAPH_NODE_TYPE_KERNEL,
        graph_node_type::MEMCPY => N::CU_GRAPH_NODE_TYPE_MEMCPY,
        graph_node_type::MEMSET => N::CU_GRAPH_NODE_TYPE_MEMSET,
        graph_node_type::EMPTY => N::CU_GRAPH_NODE_TYPE_EMPTY,
        graph_node_type::MEM_ALLOC => N::CU_GRAPH_NODE_TYPE_MEM_ALLOC,
        graph_node_type::MEM_FREE => N::CU_GRAPH_NODE_TYPE_MEM_FREE,
        GRAPH_DEBUG_DOT_FLAGS_VERBOSE => sys::CUgraphDebugDot_flags::CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE,
        TENSOR_MAP_INTERLEAVE_NONE => sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
        TENSOR_MAP_L2_PROMOTION_256B => sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        TENSOR_MAP_OOB_FILL_NONE => sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
    }
}

/// The tensor maps' element types and swizzles (`memory/tensor_map.rs`)
/// have `cuda.h`'s values.
#[test]
fn tensor_map_element_types_and_swizzles_have_the_values_cuda_h_declares() {
    use crate::{Swizzle, TensorElement};
    use gpu_device::{bf16, f16};
    use sys::CUtensorMapDataType as D;
    use sys::CUtensorMapSwizzle as S;
    let types = [
        (u8::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_UINT8),
        (u16::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_UINT16),
        (u32::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_UINT32),
        (i32::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_INT32),
        (u64::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_UINT64),
        (i64::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_INT64),
        (f16::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_FLOAT16),
        (f32::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_FLOAT32),
        (f64::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_FLOAT64),
        (bf16::DATA_TYPE, D::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16),
    ];
    for (ours, theirs) in types {
        assert_eq!(ours, theirs as u32, "{theirs:?}");
    }
    let swizzles = [
        (Swizzle::None, S::CU_TENSOR_MAP_SWIZZLE_NONE),
        (Swizzle::Bytes32, S::CU_TENSOR_MAP_SWIZZLE_32B),
        (Swizzle::Bytes64, S::CU_TENSOR_MAP_SWIZZLE_64B),
        (Swizzle::Bytes128, S::CU_TENSOR_MAP_SWIZZLE_128B),
    ];
    for (ours, theirs) in swizzles {
        assert_eq!(ours.driver_value(), theirs as u32, "{theirs:?}");
    }
}

#[test]
fn the_statuses_the_runtime_tells_apart_have_the_values_cuda_h_declares() {
    use sys::CUresult as R;
    same_values! {
        status::INVALID_VALUE => R::CUDA_ERROR_INVALID_VALUE,
        status::INVALID_PTX => R::CUDA_ERROR_INVALID_PTX,
        status::INVALID_HANDLE => R::CUDA_ERROR_INVALID_HANDLE,
        status::OUT_OF_MEMORY => R::CUDA_ERROR_OUT_OF_MEMORY,
        status::LAUNCH_OUT_OF_RESOURCES => R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        status::LAUNCH_FAILED => R::CUDA_ERROR_LAUNCH_FAILED,
        status::NOT_READY => R::CUDA_ERROR_NOT_READY,
        status::NOT_FOUND => R::CUDA_ERROR_NOT_FOUND,
        status::NOT_PERMITTED => R::CUDA_ERROR_NOT_PERMITTED,
        status::NOT_SUPPORTED => R::CUDA_ERROR_NOT_SUPPORTED,
        status::STREAM_CAPTURE_UNSUPPORTED => R::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        status::STREAM_CAPTURE_INVALIDATED => R::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
        status::STREAM_CAPTURE_MERGE => R::CUDA_ERROR_STREAM_CAPTURE_MERGE,
        status::STREAM_CAPTURE_UNMATCHED => R::CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
        status::STREAM_CAPTURE_UNJOINED => R::CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
        status::STREAM_CAPTURE_ISOLATION => R::CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
        status::STREAM_CAPTURE_IMPLICIT => R::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
        status::PEER_ACCESS_UNSUPPORTED => R::CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
        status::PEER_ACCESS_ALREADY_ENABLED => R::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
    }
    // `DriverError::is_kernel_fault`'s codes: each a failure of a running
    // kernel that leaves its context unusable.
    use super::super::DriverError;
    let fault = |code: R| DriverError {
        call: "",
        code: code as i32,
        name: String::new(),
        description: String::new(),
    };
    for code in [
        R::CUDA_ERROR_ILLEGAL_ADDRESS,
        R::CUDA_ERROR_LAUNCH_TIMEOUT,
        R::CUDA_ERROR_HARDWARE_STACK_ERROR,
        R::CUDA_ERROR_ILLEGAL_INSTRUCTION,
        R::CUDA_ERROR_MISALIGNED_ADDRESS,
        R::CUDA_ERROR_INVALID_ADDRESS_SPACE,
        R::CUDA_ERROR_INVALID_PC,
        R::CUDA_ERROR_LAUNCH_FAILED,
    ] {
        assert!(fault(code).is_kernel_fault(), "{code:?}");
    }
    for code in [
        R::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
        R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        R::CUDA_ERROR_OUT_OF_MEMORY,
        R::CUDA_ERROR_INVALID_VALUE,
    ] {
        assert!(!fault(code).is_kernel_fault(), "{code:?}");
    }
}

#[test]
fn driver_structs_have_the_layouts_cuda_h_declares() {
    same_layout!(Memcpy2d, sys::CUDA_MEMCPY2D {
        src_x_bytes => srcXInBytes,
        src_y => srcY,
        src_memory_type => srcMemoryType,
        src_host => srcHost,
        src_device => srcDevice,
        src_array => srcArray,
        src_pitch => srcPitch,
        dst_x_bytes => dstXInBytes,
        dst_y => dstY,
        dst_memory_type => dstMemoryType,
        dst_host => dstHost,
        dst_device => dstDevice,
        dst_array => dstArray,
        dst_pitch => dstPitch,
        width_bytes => WidthInBytes,
        height => Height,
    });
    same_layout!(MemLocation, sys::CUmemLocation { kind => type_, id => id });
    same_layout!(LaunchAttribute, sys::CUlaunchAttribute {
        id => id,
        pad => pad,
        value => value,
    });
    assert_eq!(
        size_of::<LaunchAttributeValue>(),
        size_of::<sys::CUlaunchAttributeValue>()
    );
    assert_eq!(
        align_of::<LaunchAttributeValue>(),
        align_of::<sys::CUlaunchAttributeValue>()
    );
    same_layout!(LaunchExConfig, sys::CUlaunchConfig {
        grid => gridDimX,
        block => blockDimX,
        shared_bytes => sharedMemBytes,
        stream => hStream,
        attrs => attrs,
        attr_count => numAttrs,
    });
    assert_eq!(
        offset_of!(LaunchExConfig, grid) + 8,
        offset_of!(sys::CUlaunchConfig, gridDimZ)
    );
    assert_eq!(
        offset_of!(LaunchExConfig, block) + 8,
        offset_of!(sys::CUlaunchConfig, blockDimZ)
    );
    // The cluster dimension is the value's first three words.
    assert_eq!(
        size_of::<sys::CUlaunchAttributeValue_union__bindgen_ty_1>(),
        3 * size_of::<std::ffi::c_uint>()
    );
    assert_eq!(size_of::<TensorMapBytes>(), size_of::<sys::CUtensorMap>());
    assert_eq!(align_of::<TensorMapBytes>(), align_of::<sys::CUtensorMap>());
    same_layout!(MemAccessDesc, sys::CUmemAccessDesc {
        location => location,
        flags => flags,
    });
    // `cuGraphExecKernelNodeSetParams` (unversioned) takes version 1.
    same_layout!(KernelNodeParams, sys::CUDA_KERNEL_NODE_PARAMS_v1 {
        func => func,
        grid => gridDimX,
        block => blockDimX,
        shared_bytes => sharedMemBytes,
        kernel_params => kernelParams,
        extra => extra,
    });
    assert_eq!(
        offset_of!(KernelNodeParams, grid) + 8,
        offset_of!(sys::CUDA_KERNEL_NODE_PARAMS_v1, gridDimZ)
    );
    assert_eq!(
        offset_of!(KernelNodeParams, block) + 8,
        offset_of!(sys::CUDA_KERNEL_NODE_PARAMS_v1, blockDimZ)
    );
}
