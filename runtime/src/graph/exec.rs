//! [`Graph`], its kernel nodes, and its instances ([`GraphExec`]).

use crate::backend::{driver, GraphExecHandle, GraphHandle, GraphNodeHandle, GraphNodeKind};
use crate::callback::in_callback;
use crate::capture::CapturedKernel;
use crate::deferred::defer;
use crate::device;
use crate::error::{Error, Result};
use crate::last_kernel::KernelId;
use crate::launch::KernelArgs;
use crate::memory::tracking::{Access, CapturedMemory, GraphUse};
use crate::stream::Stream;
use std::sync::Arc;

/// A captured graph of device work (CuPy's `cupy.cuda.Graph` before
/// instantiation). It keeps alive the device buffers its work uses.
pub struct Graph {
    handle: GraphHandle,
    device: usize,
    capture: u64,
    kernels: Vec<KernelNode>,
    /// Every buffer the graph uses, with whether it writes it.
    memory: Vec<GraphUse>,
    /// Per kernel node (as `kernels`), the buffers its launch used.
    node_memory: Vec<Vec<GraphUse>>,
    /// Whether other streams took part in the capture: the graph may then
    /// have branches it does not order with each other.
    forked: bool,
}

/// A kernel launch of a captured graph, in capture order
/// ([`Graph::kernel_nodes`]): what [`GraphExec::set_kernel_args`] updates.
#[derive(Clone, Debug)]
pub struct KernelNode {
    node: GraphNodeHandle,
    function: usize,
    name: &'static str,
    capture: u64,
    /// Its place in [`Graph::kernel_nodes`].
    index: usize,
}

impl KernelNode {
    /// The kernel the node launches.
    pub fn kernel_name(&self) -> &'static str {
        self.name
    }
}

impl Graph {
    pub(crate) fn new(
        handle: GraphHandle,
        device: usize,
        capture: u64,
        kernels: Vec<CapturedKernel>,
        mut memory: CapturedMemory,
        forked: bool,
    ) -> Graph {
        let node_memory = kernels
            .iter()
            .map(|k| memory.per_node.remove(&k.node).unwrap_or_default())
            .collect();
        Graph {
            handle,
            device,
            capture,
            kernels: kernels
                .into_iter()
                .enumerate()
                .map(|(index, k)| KernelNode {
                    node: k.node,
                    function: k.function,
                    name: k.name,
                    capture,
                    index,
                })
                .collect(),
            memory: memory.all,
            node_memory,
            forked,
        }
    }

    /// The kernel launches captured, in the order they were queued.
    pub fn kernel_nodes(&self) -> &[KernelNode] {
        &self.kernels
    }

    /// What each node of the graph does (kernels, copies, memsets,
    /// allocations, frees, ...), in the driver's order.
    pub fn node_kinds(&self) -> Result<Vec<GraphNodeKind>> {
        device::state(self.device)?;
        Ok(driver()
            .graph_nodes(self.handle)?
            .into_iter()
            .map(|(_, kind)| kind)
            .collect())
    }

    /// The graph in Graphviz's dot language, for looking at what was
    /// captured (CUDA's `cudaGraphDebugDotPrint`, CuPy's
    /// `graph.debug_dot_str()`): a node per graph node with its kind (and a
    /// kernel's name), an edge per dependency. The text is the driver's on
    /// CUDA and the simulator's equivalent there: compare structure, not text.
    pub fn to_dot(&self) -> Result<String> {
        self.dot(false)
    }

    /// As [`to_dot`](Self::to_dot), with each node's details (CUDA's verbose
    /// flag: a kernel's launch shape and parameters, a copy's ranges, ...;
    /// the simulator adds each node's index and dependency count).
    pub fn to_dot_verbose(&self) -> Result<String> {
        self.dot(true)
    }

    fn dot(&self, verbose: bool) -> Result<String> {
        let state = device::state(self.device)?;
        driver()
            .graph_debug_dot(self.handle, verbose)
            .map_err(|e| state.error(e))
    }

    /// The number of the capture that made the graph.
    pub fn capture_id(&self) -> u64 {
        self.capture
    }

    /// An executable instance of the graph (CuPy instantiates in
    /// `end_capture`). Instances are independent of each other: updating
    /// one's kernel arguments leaves the others as they are.
    pub fn instantiate(&self) -> Result<GraphExec> {
        let state = device::state(self.device)?;
        let handle = driver()
            .graph_instantiate(self.handle)
            .map_err(|e| state.error(e))?;
        Ok(GraphExec {
            handle,
            device: self.device,
            capture: self.capture,
            kernels: self.kernels.clone(),
            memory: self.memory.clone(),
            captured: self.memory.clone(),
            original: self.node_memory.clone(),
            current: self.node_memory.clone(),
            forked: self.forked,
            last_kernel: self.kernels.last().map(|k| KernelId::register(k.name)),
        })
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let (handle, device) = (self.handle, self.device);
        let release = move || {
            if device::state(device).is_ok() {
                let _ = driver().graph_destroy(handle);
            }
        };
        if in_callback() {
            defer(Box::new(release));
        } else {
            release();
        }
    }
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("capture", &self.capture)
            .field("device", &self.device)
            .field("kernel_nodes", &self.kernels.len())
            .field("buffers", &self.memory.len())
            .finish()
    }
}

/// An instantiated graph, launched with [`launch`](GraphExec::launch) on any
/// stream of its device, as often as wanted (CuPy's `Graph.launch`).
/// Launches of one instance run one after the other, in the order they were
/// made, whatever their streams.
pub struct GraphExec {
    handle: GraphExecHandle,
    device: usize,
    capture: u64,
    kernels: Vec<KernelNode>,
    /// What the instance keeps alive and tracks at each launch: the graph's
    /// buffers and those of every update.
    memory: Vec<GraphUse>,
    /// The graph's buffers as captured.
    captured: Vec<GraphUse>,
    /// Per kernel node: its buffers as captured, and as now (after updates).
    original: Vec<Vec<GraphUse>>,
    current: Vec<Vec<GraphUse>>,
    /// Whether the graph may have unordered branches (see [`Graph`]).
    forked: bool,
    /// The graph's last kernel, which errors of its launches name.
    last_kernel: Option<KernelId>,
}

impl GraphExec {
    /// Queues one run of the graph on `stream`. As for a kernel launch, the
    /// run is ordered after the conflicting uses of the graph's buffers on
    /// other streams, and later uses are ordered after it.
    pub fn launch(&self, stream: &Stream) -> Result<()> {
        let state = stream.device_state("GraphExec::launch")?;
        if stream.device() != self.device {
            return Err(Error::Capture {
                capture: self.capture,
                reason: format!(
                    "the graph belongs to device {} and {stream} to device {}",
                    self.device,
                    stream.device()
                ),
            });
        }
        stream.refuse_in_capture(
            "GraphExec::launch",
            "a graph cannot be launched inside another capture; launch it after the capture ends",
        )?;
        for (memory, access) in &self.memory {
            memory.tracker().access(stream, *access)?;
        }
        driver()
            .graph_launch(self.handle, stream.handle())
            .map_err(|e| stream.error(e))?;
        if let Some(kernel) = self.last_kernel {
            stream.note_launch(kernel, state);
        }
        Ok(())
    }

    /// The kernel launches of the graph, as [`Graph::kernel_nodes`].
    pub fn kernel_nodes(&self) -> &[KernelNode] {
        &self.kernels
    }

    /// Gives kernel node `node` new arguments (and launch shape) for the
    /// launches queued from now on; launches already queued keep theirs.
    /// `args` come from the kernel's typed launcher,
    /// `kernel_args!(k[grid, block](args))`, so their types are checked at
    /// compile time; they must be for the node's kernel.
    ///
    /// The graph's edges were made for the buffers as captured. In a graph
    /// captured from one stream every node is ordered after the one before,
    /// so any buffers may be given. In a graph with forked streams, whose
    /// branches may run at the same time, a buffer the node did not use as
    /// captured (or now writes where it read) is refused if other work of
    /// the graph uses it and one of the two writes it: nothing would order
    /// the two. Buffers allocated inside a capture are refused.
    pub fn set_kernel_args(&mut self, node: &KernelNode, mut args: KernelArgs) -> Result<()> {
        let state = device::state(self.device)?;
        if node.capture != self.capture {
            return Err(Error::Capture {
                capture: self.capture,
                reason: format!(
                    "the kernel node `{}` belongs to the graph of capture {}",
                    node.name, node.capture
                ),
            });
        }
        if args.function_id() != node.function {
            return Err(Error::GraphKernelMismatch {
                node: node.name,
                given: args.kernel_name(),
            });
        }
        if args.device() != self.device {
            return Err(Error::Capture {
                capture: self.capture,
                reason: format!(
                    "the arguments were made for device {} and the graph is on device {}",
                    args.device(),
                    self.device
                ),
            });
        }
        for (memory, access) in args.memory() {
            if let (Some(capture), _) = memory.tracker().graph_allocation() {
                return Err(Error::BufferOfCapture {
                    capture: capture.id,
                });
            }
            if self.forked && !self.may_use(node.index, memory, *access) {
                return Err(Error::Capture {
                    capture: self.capture,
                    reason: format!(
                        "the new arguments of `{}` {} a buffer that other work of the graph {}, on a branch the graph does not order with this node; capture the graph with these buffers instead",
                        node.name,
                        if *access == Access::Write { "write" } else { "read" },
                        if *access == Access::Write { "uses" } else { "writes" },
                    ),
                });
            }
        }
        // Kept alive and tracked from now on (the old arguments' memory too,
        // for the launches already queued).
        for (memory, access) in args.memory() {
            let known = self.memory.iter_mut().find(|(m, _)| Arc::ptr_eq(m, memory));
            match known {
                Some((_, a)) => *a = (*a).max(*access),
                None => self.memory.push((Arc::clone(memory), *access)),
            }
        }
        let (exec, handle) = (self.handle, node.node);
        // SAFETY: the arguments were checked and copied by the kernel's typed
        // launcher, which marshals them as the entry point expects; the
        // memory they refer to is kept alive by `self.memory` (above) as long
        // as the instance, and tracked at each launch; no new access races
        // with another node's (checked above).
        args.with_launch(|launch| unsafe { driver().graph_exec_set_kernel(exec, handle, launch) })
            .map_err(|e| state.error(e))?;
        self.current[node.index] = args.memory().to_vec();
        Ok(())
    }

    /// Whether kernel node `index` may make `access` of `memory` without an
    /// edge of the graph ordering it: it did so as captured, or no other work
    /// of the graph (as captured, or as updated) conflicts with it.
    fn may_use(
        &self,
        index: usize,
        memory: &Arc<dyn crate::memory::tracking::Tracked>,
        access: Access,
    ) -> bool {
        let same = |m: &Arc<dyn crate::memory::tracking::Tracked>| Arc::ptr_eq(m, memory);
        if self.original[index]
            .iter()
            .any(|(m, a)| same(m) && *a >= access)
        {
            return true;
        }
        let conflicts =
            |(m, a): &GraphUse| same(m) && (*a == Access::Write || access == Access::Write);
        let mut others = self
            .current
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .flat_map(|(_, uses)| uses);
        !self.captured.iter().any(conflicts) && !others.any(conflicts)
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        let (handle, device) = (self.handle, self.device);
        // An instance in flight is freed by the driver when it completes.
        let release = move || {
            if device::state(device).is_ok() {
                let _ = driver().graph_exec_destroy(handle);
            }
        };
        if in_callback() {
            defer(Box::new(release));
        } else {
            release();
        }
    }
}

impl std::fmt::Debug for GraphExec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphExec")
            .field("capture", &self.capture)
            .field("device", &self.device)
            .field("kernel_nodes", &self.kernels.len())
            .finish()
    }
}
