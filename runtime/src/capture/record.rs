//! One capture's record, from its begin to its end.

use crate::backend::GraphNodeHandle;
use std::any::Any;
use std::fmt::Display;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// A kernel launch captured as a node.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CapturedKernel {
    /// The node it made.
    pub(crate) node: GraphNodeHandle,
    /// The launched `KernelFunction`'s address: it tells kernels apart.
    pub(crate) function: usize,
    /// The kernel's name.
    pub(crate) name: &'static str,
}

/// A stream taking part in a capture.
struct Member<S> {
    stream: S,
    /// As errors name it.
    description: String,
    /// Whether it synchronises with its device's legacy default stream.
    blocking: bool,
}

/// One capture, from `begin` to its end, with streams of type `S`: its
/// streams, the kernel launches that made its nodes, the memory its work
/// uses, and what must wait until it ends.
pub(crate) struct Record<S> {
    /// Unique in the process; names the capture in errors.
    pub(crate) id: u64,
    /// The device of its streams.
    pub(crate) device: usize,
    /// The stream that began it and ends it.
    origin: S,
    /// As errors name the origin.
    origin_description: String,
    /// Every stream in it now, the origin first, in the order they joined.
    members: Mutex<Vec<Member<S>>>,
    /// The kernel launches captured, in order.
    kernels: Mutex<Vec<CapturedKernel>>,
    /// Work to do once the capture has ended (frees of memory whose last
    /// use is on a capturing stream but that the graph does not use).
    after_end: Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    /// The memory tracking's part (the buffers the capture uses, their
    /// accesses inside it, its graph allocations), typed there: this module
    /// is below the memory module.
    memory: Mutex<Option<Box<dyn Any + Send>>>,
    ended: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl<S: Clone + PartialEq + Display> Record<S> {
    /// A capture about to begin on `origin` of `device`.
    pub(crate) fn new(origin: S, device: usize) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Record {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            device,
            origin_description: origin.to_string(),
            origin,
            members: Mutex::new(Vec::new()),
            kernels: Mutex::new(Vec::new()),
            after_end: Mutex::new(Vec::new()),
            memory: Mutex::new(None),
            ended: AtomicBool::new(false),
        }
    }

    /// Whether the capture has ended (or was abandoned).
    pub(crate) fn has_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Records that `stream` joined the capture; `blocking`: it synchronises
    /// with the legacy default stream.
    pub(crate) fn add_member(&self, stream: &S, blocking: bool) {
        let mut members = lock(&self.members);
        if !members.iter().any(|m| m.stream == *stream) {
            members.push(Member {
                description: stream.to_string(),
                stream: stream.clone(),
                blocking,
            });
        }
    }

    /// Records that `stream` left the capture (its end, or a failed join).
    pub(crate) fn remove_member(&self, stream: &S) {
        lock(&self.members).retain(|m| m.stream != *stream);
    }

    /// The streams that joined besides the origin, in the order they joined.
    pub(crate) fn forked(&self) -> Vec<S> {
        lock(&self.members)
            .iter()
            .filter(|m| m.stream != self.origin)
            .map(|m| m.stream.clone())
            .collect()
    }

    /// Records a captured kernel launch.
    pub(crate) fn add_kernel(&self, kernel: CapturedKernel) {
        lock(&self.kernels).push(kernel);
    }

    /// Runs `work` once the capture has ended.
    pub(crate) fn after_end(&self, work: Box<dyn FnOnce() + Send>) {
        lock(&self.after_end).push(work);
    }

    /// Marks the capture ended; returns the streams forked into it (see
    /// [`forked`](Self::forked)), its kernels and the work to do now.
    #[allow(clippy::type_complexity)]
    pub(crate) fn end(&self) -> (Vec<S>, Vec<CapturedKernel>, Vec<Box<dyn FnOnce() + Send>>) {
        self.ended.store(true, Ordering::Release);
        (
            self.forked(),
            std::mem::take(&mut *lock(&self.kernels)),
            std::mem::take(&mut *lock(&self.after_end)),
        )
    }
}

impl<S> Record<S> {
    /// Runs `f` on the memory tracking's part of the record, made on first use.
    pub(crate) fn memory<T: Default + Send + 'static, R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let mut part = lock(&self.memory);
        let part = part.get_or_insert_with(|| Box::new(T::default()));
        f(part
            .downcast_mut()
            .expect("the memory part of a capture record has one type"))
    }

    /// Takes the memory tracking's part of the record (at the capture's end).
    pub(crate) fn take_memory<T: Default + Send + 'static>(&self) -> T {
        match lock(&self.memory).take() {
            Some(part) => *part
                .downcast()
                .expect("the memory part of a capture record has one type"),
            None => T::default(),
        }
    }
}

/// What a device's registry of captures in progress asks of a record,
/// whatever its stream type.
pub(crate) trait InProgress: Send + Sync {
    /// The capture's number.
    fn id(&self) -> u64;
    /// Whether it has ended.
    fn has_ended(&self) -> bool;
    /// The stream that began it, as errors name it.
    fn origin(&self) -> &str;
    /// The first of its streams that synchronises with the legacy default
    /// stream, as errors name it, if one does.
    fn blocking_member(&self) -> Option<String>;
    /// Runs `work` once it has ended.
    fn after_end(&self, work: Box<dyn FnOnce() + Send>);
}

impl<S: Clone + PartialEq + Display + Send + Sync> InProgress for Record<S> {
    fn id(&self) -> u64 {
        self.id
    }

    fn has_ended(&self) -> bool {
        Record::has_ended(self)
    }

    fn origin(&self) -> &str {
        &self.origin_description
    }

    fn blocking_member(&self) -> Option<String> {
        lock(&self.members)
            .iter()
            .find(|m| m.blocking)
            .map(|m| m.description.clone())
    }

    fn after_end(&self, work: Box<dyn FnOnce() + Send>) {
        Record::after_end(self, work)
    }
}
