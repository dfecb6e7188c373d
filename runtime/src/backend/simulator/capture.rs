//! Stream capture on the simulator: the graph being built while streams
//! capture, as CUDA builds it.
//!
//! A capturing stream does not run what is queued on it: each operation
//! becomes a node that depends on the stream's *tail* (the nodes the stream's
//! last operations made), and becomes the new tail. An event recorded on a
//! capturing stream remembers the capture and that tail; a stream that waits
//! for such an event joins the capture with it as its tail (a fork), and a
//! capturing stream that waits for one adds it to its tail (a join). Memory
//! allocated on a capturing stream belongs to the graph, and a free of it is
//! a node that does nothing: the memory is released when the last graph and
//! instance holding it are gone.

use super::super::{DevicePtr, GraphNodeKind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What a node runs: the same operation at every replay.
pub(crate) type Work = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// Gives memory back to the simulator's allocator.
pub(crate) type Releaser = Box<dyn FnOnce() + Send>;

/// One node of a graph: what it runs (nothing for ordering nodes and memory
/// nodes) and the earlier nodes it depends on.
#[derive(Clone)]
pub(crate) struct Node {
    pub(crate) kind: GraphNodeKind,
    /// What the node runs, for the graph's dot rendering: a kernel's name.
    pub(crate) label: &'static str,
    pub(crate) work: Option<Work>,
    pub(crate) deps: Vec<usize>,
}

/// The memory a graph allocated, held by the graph and its instances.
#[derive(Default)]
pub(crate) struct GraphMemory {
    blocks: Mutex<Vec<(DevicePtr, Option<Releaser>)>>,
}

impl GraphMemory {
    /// Whether `ptr` is the start of an allocation of the graph.
    pub(crate) fn contains(&self, ptr: DevicePtr) -> bool {
        let blocks = self.blocks.lock().unwrap_or_else(|e| e.into_inner());
        blocks.iter().any(|(p, _)| *p == ptr)
    }
}

impl Drop for GraphMemory {
    fn drop(&mut self) {
        let blocks = self.blocks.get_mut().unwrap_or_else(|e| e.into_inner());
        for (_, release) in blocks.iter_mut() {
            if let Some(release) = release.take() {
                release();
            }
        }
    }
}

/// A capture in progress: the graph so far.
pub(crate) struct Capture {
    /// The stream that began it (its address), the only one that can end it.
    pub(crate) origin: usize,
    /// Tells captures apart in error messages.
    pub(crate) id: u64,
    nodes: Mutex<Vec<Node>>,
    pub(crate) memory: Arc<GraphMemory>,
    /// Set when the capture ends (events recorded in it are no longer
    /// points anything can wait for).
    pub(crate) ended: std::sync::atomic::AtomicBool,
    /// Set when the legacy default stream was used while a blocking stream
    /// of the capture captured: CUDA invalidates the capture then, and so
    /// does the simulator (its end fails).
    pub(crate) invalidated: std::sync::atomic::AtomicBool,
}

/// A stream's part in a capture: the capture and the stream's tail.
#[derive(Clone)]
pub(crate) struct Membership {
    pub(crate) capture: Arc<Capture>,
    pub(crate) tail: Vec<usize>,
}

impl Capture {
    /// A capture begun on the stream at address `origin`.
    pub(crate) fn new(origin: usize) -> Arc<Capture> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Arc::new(Capture {
            origin,
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            nodes: Mutex::new(Vec::new()),
            memory: Arc::new(GraphMemory::default()),
            ended: std::sync::atomic::AtomicBool::new(false),
            invalidated: std::sync::atomic::AtomicBool::new(false),
        })
    }

    fn nodes(&self) -> std::sync::MutexGuard<'_, Vec<Node>> {
        self.nodes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a node (`label`: a kernel's name) depending on `deps`; returns its index.
    pub(crate) fn add(
        &self,
        kind: GraphNodeKind,
        label: &'static str,
        work: Option<Work>,
        deps: &[usize],
    ) -> usize {
        let mut nodes = self.nodes();
        nodes.push(Node {
            kind,
            label,
            work,
            deps: deps.to_vec(),
        });
        nodes.len() - 1
    }

    /// Records memory allocated in the capture, released by `release` once
    /// the graph and its instances are gone.
    pub(crate) fn own_memory(&self, ptr: DevicePtr, release: Releaser) {
        let mut blocks = self.memory.blocks.lock().unwrap_or_else(|e| e.into_inner());
        blocks.push((ptr, Some(release)));
    }

    /// Whether every node of `tail` is among `joined` or their ancestors:
    /// whether a stream with that tail was joined back into one with tail
    /// `joined`.
    pub(crate) fn is_joined(&self, tail: &[usize], joined: &[usize]) -> bool {
        let nodes = self.nodes();
        let mut seen = vec![false; nodes.len()];
        let mut stack: Vec<usize> = joined.to_vec();
        while let Some(n) = stack.pop() {
            if n < seen.len() && !std::mem::replace(&mut seen[n], true) {
                stack.extend(&nodes[n].deps);
            }
        }
        tail.iter().all(|&n| seen.get(n).copied().unwrap_or(false))
    }

    /// The nodes captured, in capture order (every node after its
    /// dependencies).
    pub(crate) fn take_nodes(&self) -> Vec<Node> {
        std::mem::take(&mut *self.nodes())
    }
}

/// `a` with the nodes of `b` it lacks.
pub(crate) fn union(a: &mut Vec<usize>, b: &[usize]) {
    for &n in b {
        if !a.contains(&n) {
            a.push(n);
        }
    }
}
