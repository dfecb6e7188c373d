//! Stream capture and graphs on the CUDA driver: relaxed capture mode,
//! the node a captured launch made (`cuStreamGetCaptureInfo`), instances and
//! their kernel-node updates.

use super::super::{
    DriverError, GraphExecHandle, GraphHandle, GraphNodeHandle, GraphNodeKind, KernelLaunch,
    StreamHandle,
};
use super::call::{check, stream};
use super::ffi::*;
use std::ptr;

pub(super) fn begin_capture(on: StreamHandle) -> Result<(), DriverError> {
    // SAFETY: a live stream; relaxed mode.
    check("cuStreamBeginCapture", unsafe {
        cuStreamBeginCapture_v2(stream(on), STREAM_CAPTURE_MODE_RELAXED)
    })
}

pub(super) fn end_capture(on: StreamHandle) -> Result<GraphHandle, DriverError> {
    let mut graph = ptr::null_mut();
    // SAFETY: a live stream; writes one graph handle.
    check("cuStreamEndCapture", unsafe {
        cuStreamEndCapture(stream(on), &mut graph)
    })?;
    Ok(GraphHandle {
        raw: graph as usize,
        device: on.device,
    })
}

pub(super) fn capture_dependencies(on: StreamHandle) -> Result<Vec<GraphNodeHandle>, DriverError> {
    let (mut status, mut id, mut graph) = (0, 0u64, ptr::null_mut());
    let (mut nodes, mut count): (*const CUgraphNode, usize) = (ptr::null(), 0);
    // SAFETY: a live stream; the driver writes the status, id, graph and
    // a pointer to its own array of `count` nodes, valid until the next
    // call on the stream (read below, before any).
    check("cuStreamGetCaptureInfo", unsafe {
        cuStreamGetCaptureInfo_v2(
            stream(on),
            &mut status,
            &mut id,
            &mut graph,
            &mut nodes,
            &mut count,
        )
    })?;
    if status != STREAM_CAPTURE_STATUS_ACTIVE || nodes.is_null() {
        return Ok(Vec::new());
    }
    // SAFETY: `nodes` points to `count` node handles (above).
    let nodes = unsafe { std::slice::from_raw_parts(nodes, count) };
    Ok(nodes.iter().map(|&n| GraphNodeHandle(n as usize)).collect())
}

pub(super) fn nodes(
    graph: GraphHandle,
) -> Result<Vec<(GraphNodeHandle, GraphNodeKind)>, DriverError> {
    let mut count = 0usize;
    // SAFETY: a live graph; with a null array the driver writes the count.
    check("cuGraphGetNodes", unsafe {
        cuGraphGetNodes(graph.raw as CUgraph, ptr::null_mut(), &mut count)
    })?;
    let mut nodes = vec![ptr::null_mut(); count];
    // SAFETY: the array has room for `count` handles; the driver writes
    // at most that many and the number written.
    check("cuGraphGetNodes", unsafe {
        cuGraphGetNodes(graph.raw as CUgraph, nodes.as_mut_ptr(), &mut count)
    })?;
    nodes.truncate(count);
    nodes
        .into_iter()
        .map(|node| {
            let mut kind = 0;
            // SAFETY: a node of the live graph; writes one int.
            check("cuGraphNodeGetType", unsafe {
                cuGraphNodeGetType(node, &mut kind)
            })?;
            use graph_node_type as T;
            let kind = match kind {
                T::KERNEL => GraphNodeKind::Kernel,
                T::MEMCPY => GraphNodeKind::Memcpy,
                T::MEMSET => GraphNodeKind::Memset,
                T::MEM_ALLOC => GraphNodeKind::MemAlloc,
                T::MEM_FREE => GraphNodeKind::MemFree,
                T::EMPTY => GraphNodeKind::Empty,
                other => GraphNodeKind::Other(other),
            };
            Ok((GraphNodeHandle(node as usize), kind))
        })
        .collect()
}

pub(super) fn instantiate(graph: GraphHandle) -> Result<GraphExecHandle, DriverError> {
    let mut exec = ptr::null_mut();
    // SAFETY: a live graph; writes one instance handle. No flags: a graph
    // whose allocations it does not free itself cannot be relaunched,
    // which the runtime never builds (memory allocated in a capture must
    // be freed in it).
    check("cuGraphInstantiate", unsafe {
        cuGraphInstantiateWithFlags(&mut exec, graph.raw as CUgraph, 0)
    })?;
    Ok(GraphExecHandle {
        raw: exec as usize,
        device: graph.device,
    })
}

pub(super) fn launch(exec: GraphExecHandle, on: StreamHandle) -> Result<(), DriverError> {
    // SAFETY: a live instance and stream.
    check("cuGraphLaunch", unsafe {
        cuGraphLaunch(exec.raw as CUgraphExec, stream(on))
    })
}

/// # Safety
/// As [`Driver::graph_exec_set_kernel`](super::super::Driver::graph_exec_set_kernel).
pub(super) unsafe fn set_kernel(
    exec: GraphExecHandle,
    node: GraphNodeHandle,
    launch: KernelLaunch<'_>,
) -> Result<(), DriverError> {
    let params = KernelNodeParams {
        func: launch.function.raw as CUfunction,
        grid: launch.grid,
        block: launch.block,
        shared_bytes: launch.shared_bytes,
        kernel_params: launch.params.as_mut_ptr(),
        extra: ptr::null_mut(),
    };
    // SAFETY: the parameter values are copied by the driver during the
    // call; the rest is forwarded to the caller.
    check("cuGraphExecKernelNodeSetParams", unsafe {
        cuGraphExecKernelNodeSetParams(exec.raw as CUgraphExec, node.0 as CUgraphNode, &params)
    })
}

pub(super) fn destroy_exec(exec: GraphExecHandle) -> Result<(), DriverError> {
    // SAFETY: a live instance, destroyed once.
    check("cuGraphExecDestroy", unsafe {
        cuGraphExecDestroy(exec.raw as CUgraphExec)
    })
}

pub(super) fn destroy(graph: GraphHandle) -> Result<(), DriverError> {
    // SAFETY: a live graph, destroyed once.
    check("cuGraphDestroy", unsafe {
        cuGraphDestroy(graph.raw as CUgraph)
    })
}

/// The graph's dot text: `cuGraphDebugDotPrint` writes it to a file (a new
/// one in the temporary directory), read back and removed.
pub(super) fn debug_dot(graph: GraphHandle, verbose: bool) -> Result<String, DriverError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "gpu-runtime-graph-{}-{}.dot",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let io_error = |e: std::io::Error| DriverError {
        call: "cuGraphDebugDotPrint",
        code: super::super::status::INVALID_VALUE,
        name: "the graph's dot file".into(),
        description: format!("{}: {e}", path.display()),
    };
    let c_path = std::ffi::CString::new(path.to_string_lossy().into_owned()).map_err(|_| {
        io_error(std::io::Error::other(
            "the temporary directory's path holds a NUL byte",
        ))
    })?;
    let flags = if verbose {
        GRAPH_DEBUG_DOT_FLAGS_VERBOSE
    } else {
        0
    };
    // SAFETY: a live graph; `c_path` is a NUL-terminated path the driver
    // only reads.
    check("cuGraphDebugDotPrint", unsafe {
        cuGraphDebugDotPrint(graph.raw as CUgraph, c_path.as_ptr(), flags)
    })?;
    let dot = std::fs::read_to_string(&path).map_err(io_error);
    let _ = std::fs::remove_file(&path);
    dot
}
