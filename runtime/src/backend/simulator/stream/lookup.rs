//! Which simulated stream a handle names: a created stream, or one of the
//! default streams of the handle's device (the calling thread's per-thread
//! one, made on first use).

use super::super::super::StreamHandle;
use super::queue::{legacy, thread_name, Kind, SimStream};
use std::cell::RefCell;
use std::sync::Arc;

/// A per-thread default stream, closed when its host thread ends (its worker
/// holds a reference of its own, so dropping ours alone would not stop it).
struct PerThread(Arc<SimStream>);

impl Drop for PerThread {
    fn drop(&mut self) {
        self.0.close();
    }
}

thread_local! {
    /// The calling thread's per-thread default stream of each device.
    static PER_THREAD: RefCell<Vec<Option<PerThread>>> = const { RefCell::new(Vec::new()) };
}

fn per_thread(device: usize) -> Arc<SimStream> {
    PER_THREAD.with(|streams| {
        let mut streams = streams.borrow_mut();
        if streams.len() <= device {
            streams.resize_with(device + 1, || None);
        }
        let own = streams[device].get_or_insert_with(|| {
            let name = format!(
                "the per-thread default stream of host thread {} (device {device})",
                thread_name()
            );
            PerThread(SimStream::new(device, Kind::Blocking, 0, Some(name)))
        });
        Arc::clone(&own.0)
    })
}

/// Runs `f` with the stream a handle names; the default streams are those of
/// the handle's device.
pub(super) fn with<R>(handle: StreamHandle, f: impl FnOnce(&Arc<SimStream>) -> R) -> R {
    match handle.raw {
        StreamHandle::LEGACY_RAW => f(legacy(handle.device)),
        StreamHandle::PER_THREAD_RAW => f(&per_thread(handle.device)),
        raw => {
            // SAFETY: other handles come from `create`, which leaked one strong
            // count that `destroy` gives back; the handle is live until then.
            // `ManuallyDrop` borrows it as an `Arc` without touching the count.
            let stream =
                std::mem::ManuallyDrop::new(unsafe { Arc::from_raw(raw as *const SimStream) });
            f(&stream)
        }
    }
}
