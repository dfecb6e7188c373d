//! Memory allocated outside stream order (managed memory, pitched
//! allocations): tracked like every buffer, and freed with `cuMemFree` once
//! the device work using it has completed.

use super::tracking::{AccessTracker, Tracked};
use crate::backend::{driver, DevicePtr};
use crate::callback::in_callback;
use crate::deferred::defer;
use crate::device;
use std::sync::{Arc, Weak};

/// An allocation freed synchronously: dropping it waits, on the host, for
/// its tracked uses, then frees it (on the release thread inside a stream
/// callback, where CUDA calls are forbidden).
pub(crate) struct DirectAllocation {
    pub(crate) ptr: DevicePtr,
    pub(crate) bytes: usize,
    pub(crate) device: usize,
    pub(crate) tracker: AccessTracker,
}

impl DirectAllocation {
    /// Takes ownership of `ptr` (`bytes` bytes allocated through `device`
    /// by `alloc_managed` or `alloc_pitch`, or 0 for nothing), not yet used
    /// by any stream.
    pub(crate) fn new(ptr: DevicePtr, bytes: usize, device: usize) -> Arc<Self> {
        Arc::new_cyclic(|owner: &Weak<DirectAllocation>| DirectAllocation {
            ptr,
            bytes,
            device,
            tracker: AccessTracker::unused(owner.clone() as Weak<dyn Tracked>),
        })
    }
}

impl Tracked for DirectAllocation {
    fn tracker(&self) -> &AccessTracker {
        &self.tracker
    }
}

impl Drop for DirectAllocation {
    fn drop(&mut self) {
        let accesses = self.tracker.take();
        let (ptr, device) = (self.ptr, self.device);
        let release = move || {
            // If waiting fails (a lost context), the device no longer runs work.
            for stream in accesses.streams() {
                let _ = stream.wait_on_host();
            }
            if ptr != 0 && device::state(device).is_ok() {
                // SAFETY: allocated through `device` by `alloc_managed` or
                // `alloc_pitch` (`new`'s contract), freed once; every tracked
                // use has completed (waited for above), and the allocation is
                // gone, so no later use can be queued.
                let _ = unsafe { driver().free_now(device, ptr) };
            }
        };
        if in_callback() {
            // CUDA calls are forbidden here: the release thread waits and frees.
            defer(Box::new(release));
        } else {
            release();
        }
    }
}
