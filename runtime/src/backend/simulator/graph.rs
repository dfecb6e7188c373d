//! Graphs on the simulator: a captured graph, its instances, and their runs.
//!
//! A run of an instance is one operation on the launching stream that runs
//! the nodes in capture order, which lists every node after the nodes it
//! depends on: one of the orders CUDA may run them in. Runs of one instance
//! are ordered after its earlier runs, on whatever streams, as
//! `cuGraphLaunch` orders them. A run takes the nodes as they are when it is
//! queued, so a later kernel update changes later runs only.

use super::super::{
    DriverError, GraphExecHandle, GraphHandle, GraphNodeHandle, GraphNodeKind, KernelLaunch,
    StreamHandle,
};
use super::capture::{Capture, GraphMemory, Node};
use super::errors::{invalid_handle, invalid_value};
use super::executor;
use super::fence::Fence;
use super::stream::{self, Failure};
use std::sync::{Arc, Mutex};

/// A captured graph.
pub(crate) struct SimGraph {
    nodes: Vec<Node>,
    memory: Arc<GraphMemory>,
}

/// An instance of a graph.
pub(crate) struct SimExec {
    nodes: Mutex<Vec<Node>>,
    memory: Arc<GraphMemory>,
    /// Signalled when the latest run queued so far has finished.
    previous: Mutex<Option<Fence>>,
}

fn graph(handle: GraphHandle) -> std::mem::ManuallyDrop<Arc<SimGraph>> {
    // SAFETY: graph handles come from `from_capture`, which leaked one strong
    // count that `destroy` gives back; borrowed here without touching it.
    std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(handle.raw as *const SimGraph) })
}

fn exec(handle: GraphExecHandle) -> std::mem::ManuallyDrop<Arc<SimExec>> {
    // SAFETY: as `graph`, for `instantiate` and `destroy_exec`.
    std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(handle.raw as *const SimExec) })
}

/// The graph of an ended capture of `device`.
pub(crate) fn from_capture(capture: Arc<Capture>, device: usize) -> GraphHandle {
    let graph = SimGraph {
        nodes: capture.take_nodes(),
        memory: Arc::clone(&capture.memory),
    };
    GraphHandle {
        raw: Arc::into_raw(Arc::new(graph)) as usize,
        device,
    }
}

pub(crate) fn nodes(handle: GraphHandle) -> Vec<(GraphNodeHandle, GraphNodeKind)> {
    graph(handle)
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (GraphNodeHandle(i), n.kind))
        .collect()
}

/// The graph in Graphviz's dot language, as `cuGraphDebugDotPrint` writes
/// it: one cluster for the graph, a node per graph node labelled with its
/// kind (and a kernel's name), an edge per dependency. `verbose` adds each
/// node's index and dependency count.
pub(crate) fn debug_dot(handle: GraphHandle, verbose: bool) -> String {
    use std::fmt::Write;
    let graph = graph(handle);
    let id = handle.raw;
    let mut dot = format!(
        "digraph dot {{\nsubgraph cluster_{id} {{\nlabel=\"graph_{id}\" graph[style=\"dashed\"];\n"
    );
    for (i, node) in graph.nodes.iter().enumerate() {
        let kind = match node.kind {
            GraphNodeKind::Kernel => "KERNEL",
            GraphNodeKind::Memcpy => "MEMCPY",
            GraphNodeKind::Memset => "MEMSET",
            GraphNodeKind::MemAlloc => "MEM_ALLOC",
            GraphNodeKind::MemFree => "MEM_FREE",
            GraphNodeKind::Empty => "EMPTY",
            GraphNodeKind::Other(_) => "OTHER",
        };
        let mut label = kind.to_string();
        if !node.label.is_empty() {
            let _ = write!(label, "\\n{}", node.label);
        }
        if verbose {
            let _ = write!(label, "\\nnode {i}, {} dependencies", node.deps.len());
        }
        let _ = writeln!(dot, "\"graph_{id}_node_{i}\" [label=\"{label}\"];");
    }
    for (i, node) in graph.nodes.iter().enumerate() {
        for dep in &node.deps {
            let _ = writeln!(dot, "\"graph_{id}_node_{dep}\" -> \"graph_{id}_node_{i}\";");
        }
    }
    dot.push_str("}\n}\n");
    dot
}

pub(crate) fn destroy(handle: GraphHandle) {
    // SAFETY: the count leaked by `from_capture`, given back once.
    drop(unsafe { Arc::from_raw(handle.raw as *const SimGraph) });
}

pub(crate) fn instantiate(handle: GraphHandle) -> GraphExecHandle {
    let graph = graph(handle);
    let exec = SimExec {
        nodes: Mutex::new(graph.nodes.clone()),
        memory: Arc::clone(&graph.memory),
        previous: Mutex::new(None),
    };
    GraphExecHandle {
        raw: Arc::into_raw(Arc::new(exec)) as usize,
        device: handle.device,
    }
}

pub(crate) fn destroy_exec(handle: GraphExecHandle) {
    // SAFETY: the count leaked by `instantiate`, given back once; queued runs
    // hold what they use.
    drop(unsafe { Arc::from_raw(handle.raw as *const SimExec) });
}

/// Signals a run's fence however the run ends.
struct SignalOnDrop(Fence);

impl Drop for SignalOnDrop {
    fn drop(&mut self) {
        self.0.signal();
    }
}

/// Queues a run of the instance on `on`, after its earlier runs; a stream
/// of another device than the instance's is refused.
pub(crate) fn launch(handle: GraphExecHandle, on: StreamHandle) -> Result<(), DriverError> {
    let device = stream::device_of(on);
    if device != handle.device {
        return Err(invalid_handle(
            "cuGraphLaunch",
            format!(
                "the graph instance belongs to device {} and the stream to device {device}",
                handle.device
            ),
        ));
    }
    let exec = exec(handle);
    let work: Vec<_> = exec
        .nodes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter_map(|n| n.work.clone())
        .collect();
    let memory = Arc::clone(&exec.memory);
    let done = Fence::new(stream::name(on), "the end of a run of a graph instance");
    let signal = done.clone();
    let mut previous = exec.previous.lock().unwrap_or_else(|e| e.into_inner());
    // Signalled however the run ends: run, failed, or skipped after a fault.
    let signal = SignalOnDrop(signal);
    stream::enqueue_after(
        on,
        previous.clone(),
        Box::new(move || {
            let _memory = memory;
            let _done = signal;
            work.iter().try_for_each(|w| w()).map_err(Failure::Fault)
        }),
    )?;
    *previous = Some(done);
    Ok(())
}

/// Replaces a kernel node's launch in the instance.
///
/// # Safety
/// As [`Driver::launch`](super::super::Driver::launch), for every later run.
pub(crate) unsafe fn set_kernel(
    handle: GraphExecHandle,
    node: GraphNodeHandle,
    launch: KernelLaunch<'_>,
) -> Result<(), DriverError> {
    if launch.function.device != handle.device {
        return Err(invalid_handle(
            "cuGraphExecKernelNodeSetParams",
            format!(
                "the kernel belongs to device {} and the graph instance to device {}",
                launch.function.device, handle.device
            ),
        ));
    }
    let exec = exec(handle);
    let mut nodes = exec.nodes.lock().unwrap_or_else(|e| e.into_inner());
    let Some(target) = nodes.get_mut(node.0) else {
        return Err(invalid_value(
            "cuGraphExecKernelNodeSetParams",
            format!("the instance has no node {}", node.0),
        ));
    };
    if target.kind != GraphNodeKind::Kernel {
        return Err(invalid_value(
            "cuGraphExecKernelNodeSetParams",
            format!(
                "node {} is a {:?} node, not a kernel node",
                node.0, target.kind
            ),
        ));
    }
    // SAFETY: forwarded to the caller.
    let call = unsafe { executor::prepare(&launch) };
    target.work = Some(Arc::new(move || executor::run(&call)));
    Ok(())
}
