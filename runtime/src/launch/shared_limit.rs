//! A kernel function's dynamic shared memory limit, raised on demand.
//!
//! The driver lets a function use more than the default 48 KiB of dynamic
//! shared memory only after its attribute is raised
//! (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`). Launches from several
//! threads may ask at once: the attribute is set and the recorded limit
//! updated together, under a lock, so a smaller request cannot set the
//! attribute after a larger one was recorded (which would make later launches
//! with the larger size skip the raise and fail in the driver).

use crate::error::Result;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// The dynamic shared memory a function is allowed now.
#[derive(Debug)]
pub(super) struct SharedLimit {
    /// What the driver's attribute allows: never more than was set.
    allowed: AtomicU32,
    /// Held while the attribute is raised.
    raising: Mutex<()>,
}

impl SharedLimit {
    /// A function allowed `bytes` (its attribute as loaded).
    pub(super) fn new(bytes: u32) -> Self {
        SharedLimit {
            allowed: AtomicU32::new(bytes),
            raising: Mutex::new(()),
        }
    }

    /// Makes sure the function may use `bytes`, calling `raise` with the new
    /// limit when it must be raised: one load when it already may.
    #[inline]
    pub(super) fn allow(&self, bytes: u32, raise: impl FnOnce(u32) -> Result<()>) -> Result<()> {
        if bytes <= self.allowed.load(Ordering::Acquire) {
            return Ok(());
        }
        self.raise(bytes, raise)
    }

    #[cold]
    fn raise(&self, bytes: u32, raise: impl FnOnce(u32) -> Result<()>) -> Result<()> {
        let _raising = self.raising.lock().unwrap_or_else(|e| e.into_inner());
        // Another thread may have raised it past `bytes` meanwhile.
        if bytes > self.allowed.load(Ordering::Acquire) {
            raise(bytes)?;
            self.allowed.store(bytes, Ordering::Release);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::SharedLimit;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Barrier;
    use std::time::Duration;

    #[test]
    fn concurrent_raises_leave_the_attribute_at_the_largest_request() {
        let limit = SharedLimit::new(48 << 10);
        // The driver's attribute: each set takes a while, smaller requests
        // longer, so that an unordered raise would let a smaller set land
        // last.
        let attribute = AtomicU32::new(48 << 10);
        let requests: Vec<u32> = (1..=8).map(|i| (48 + 16 * i) << 10).collect();
        let start = Barrier::new(requests.len());
        std::thread::scope(|scope| {
            for &bytes in &requests {
                let (limit, attribute, start) = (&limit, &attribute, &start);
                scope.spawn(move || {
                    start.wait();
                    limit
                        .allow(bytes, |new| {
                            std::thread::sleep(Duration::from_millis(
                                (200 - (new >> 10)) as u64 / 4,
                            ));
                            attribute.store(new, Ordering::SeqCst);
                            Ok(())
                        })
                        .unwrap();
                    // What this thread's launch relies on.
                    assert!(
                        attribute.load(Ordering::SeqCst) >= bytes,
                        "{bytes} bytes allowed, the attribute is {}",
                        attribute.load(Ordering::SeqCst)
                    );
                });
            }
        });
        let largest = *requests.iter().max().unwrap();
        assert_eq!(attribute.load(Ordering::SeqCst), largest);
        assert_eq!(limit.allowed.load(Ordering::SeqCst), largest);
    }

    #[test]
    fn a_request_within_the_limit_sets_nothing() {
        let limit = SharedLimit::new(48 << 10);
        limit
            .allow(1 << 10, |_| panic!("no raise is needed"))
            .unwrap();
        limit.allow(64 << 10, |_| Ok(())).unwrap();
        limit
            .allow(60 << 10, |_| panic!("64 KiB is allowed already"))
            .unwrap();
    }
}
