//! Which kernel was launched last on a stream or a device, for error reports:
//! a kernel's fault surfaces later, at some other call, and the error names
//! the kernel that most likely caused it.
//!
//! Kernel names are registered once, on a kernel's first launch, and recorded
//! as a number, so recording costs one relaxed store per launch.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::RwLock;

/// Every kernel name launched so far; a [`KernelId`] indexes it.
static NAMES: RwLock<Vec<&'static str>> = RwLock::new(Vec::new());

/// A registered kernel name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KernelId(u32);

impl KernelId {
    /// Registers `name`; called once per kernel entry point.
    pub(crate) fn register(name: &'static str) -> KernelId {
        let mut names = NAMES.write().unwrap_or_else(|e| e.into_inner());
        names.push(name);
        KernelId(names.len() as u32)
    }

    fn name(self) -> &'static str {
        let names = NAMES.read().unwrap_or_else(|e| e.into_inner());
        names[self.0 as usize - 1]
    }
}

/// The kernel launched last somewhere (a stream, a device).
#[derive(Debug, Default)]
pub(crate) struct LastKernel(AtomicU32);

impl LastKernel {
    /// None launched yet.
    pub(crate) const fn new() -> Self {
        LastKernel(AtomicU32::new(0))
    }

    /// Records a launch of `kernel`.
    #[inline]
    pub(crate) fn note(&self, kernel: KernelId) {
        self.0.store(kernel.0, Ordering::Relaxed);
    }

    /// The kernel launched last, if any.
    pub(crate) fn get(&self) -> Option<&'static str> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            id => Some(KernelId(id).name()),
        }
    }
}
