//! The current stream: kept per host thread and per device.
//!
//! Work issued without a stream (launches, copies, reductions, event records)
//! goes to the calling thread's current stream on the current device. It
//! starts as a default stream (see [`Stream`](crate::Stream)) and changes in
//! two ways, as in CuPy:
//!
//! - scoped, CuPy's `with stream:` — [`Stream::enter`] returns a guard, and
//!   [`Stream::scope`] runs a closure; leaving restores exactly the stream that
//!   was current before, whether a default, an enclosing scope's, or one set
//!   by `make_current`. (CuPy forgets a stream set by `use()` inside a `with`
//!   block when the block ends and falls back to the one current at its start;
//!   so does this crate, and additionally a `use()` *before* the block is
//!   restored at its end, where CuPy restores the default.)
//! - unscoped, CuPy's `stream.use()` — [`Stream::make_current`]: current until
//!   changed.

use crate::device::{self, Device};
use crate::error::{Error, Result};
use crate::stream::Stream;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::OnceLock;

/// Set to `1` to make the per-thread default stream, not the legacy one, each
/// thread's initial current stream (as `CUPY_CUDA_PER_THREAD_DEFAULT_STREAM`).
pub const PER_THREAD_DEFAULT_STREAM_ENV: &str = "GPU_PER_THREAD_DEFAULT_STREAM";

fn per_thread_is_default() -> bool {
    static SETTING: OnceLock<bool> = OnceLock::new();
    *SETTING
        .get_or_init(|| std::env::var(PER_THREAD_DEFAULT_STREAM_ENV).is_ok_and(|v| v.trim() == "1"))
}

thread_local! {
    /// Per device ordinal: the stream made current, or `None` for the default.
    static CURRENT: RefCell<Vec<Option<Stream>>> = const { RefCell::new(Vec::new()) };
}

fn default_stream() -> Stream {
    if per_thread_is_default() {
        Stream::per_thread()
    } else {
        Stream::null()
    }
}

/// Replaces the current stream of `ordinal`; returns the one it replaces.
fn replace(ordinal: usize, stream: Option<Stream>) -> Option<Stream> {
    CURRENT.with(|current| {
        let mut current = current.borrow_mut();
        if current.len() <= ordinal {
            current.resize(ordinal + 1, None);
        }
        std::mem::replace(&mut current[ordinal], stream)
    })
}

/// The calling thread's current stream on the current device (CuPy's
/// `cp.cuda.get_current_stream()`).
pub fn current_stream() -> Result<Stream> {
    Ok(current_on(Device::current()?.ordinal()))
}

/// The calling thread's current stream on device `ordinal`.
fn current_on(ordinal: usize) -> Stream {
    let set = CURRENT.with(|current| current.borrow().get(ordinal).cloned().flatten());
    set.unwrap_or_else(default_stream)
}

impl Stream {
    /// Checks the stream can be current: it belongs to the current device.
    fn check_current_device(&self) -> Result<usize> {
        let current = device::current_ordinal();
        if self.device() != current {
            return Err(Error::StreamOnOtherDevice {
                stream_device: self.device(),
                current_device: current,
            });
        }
        Ok(current)
    }

    /// Makes the stream the calling thread's current stream on its device
    /// until changed (CuPy's `stream.use()`). An error if the stream belongs
    /// to another device than the current one.
    pub fn make_current(&self) -> Result<()> {
        let ordinal = self.check_current_device()?;
        replace(ordinal, Some(self.clone()));
        Ok(())
    }

    /// Makes the stream current until the returned guard is dropped, which
    /// restores the stream that was current before (CuPy's `with stream:`).
    pub fn enter(&self) -> Result<StreamScope<'_>> {
        let ordinal = self.check_current_device()?;
        let previous = replace(ordinal, Some(self.clone()));
        Ok(StreamScope {
            ordinal,
            previous,
            _stream: PhantomData,
            _not_send: PhantomData,
        })
    }

    /// Runs `f` with the stream current, then restores the previous one.
    pub fn scope<R>(&self, f: impl FnOnce() -> R) -> Result<R> {
        let _scope = self.enter()?;
        Ok(f())
    }
}

/// The guard of [`Stream::enter`]: while it lives, its stream is current on
/// this thread; dropping it restores the previous current stream.
#[must_use = "the stream is current only while the guard lives"]
pub struct StreamScope<'a> {
    ordinal: usize,
    previous: Option<Stream>,
    _stream: PhantomData<&'a Stream>,
    /// The current stream is per thread: the guard stays on its thread.
    _not_send: PhantomData<*const ()>,
}

impl Drop for StreamScope<'_> {
    fn drop(&mut self) {
        replace(self.ordinal, self.previous.take());
    }
}

#[cfg(test)]
mod tests {
    //! The bookkeeping, without a GPU: the streams here are stand-in handles
    //! that never reach the driver (nothing here calls it).
    use super::*;
    use crate::stream::Kind;

    fn stand_in(handle: usize, ordinal: usize) -> Stream {
        Stream::from_parts(handle as crate::driver::CUstream, ordinal, Kind::External)
    }

    #[test]
    fn scopes_nest_and_restore_what_was_current() {
        std::thread::spawn(|| {
            let (a, b, c) = (stand_in(0x100, 0), stand_in(0x200, 0), stand_in(0x300, 0));
            assert_eq!(current_on(0), default_stream());
            {
                let _a = a.enter().unwrap();
                assert_eq!(current_on(0), a);
                let inner = b.scope(|| {
                    assert_eq!(current_on(0), b);
                    c.scope(|| current_on(0)).unwrap()
                });
                assert_eq!(inner.unwrap(), c);
                assert_eq!(current_on(0), a);
            }
            assert_eq!(current_on(0), default_stream());
            a.make_current().unwrap();
            b.scope(|| c.make_current().unwrap()).unwrap();
            assert_eq!(
                current_on(0),
                a,
                "a scope restores a stream set by make_current"
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_stream_of_another_device_cannot_be_made_current() {
        std::thread::spawn(|| {
            let other = stand_in(0x100, 1);
            let err = other.make_current().unwrap_err();
            assert_eq!(
                err,
                Error::StreamOnOtherDevice {
                    stream_device: 1,
                    current_device: 0
                }
            );
            assert_eq!(
                err.to_string(),
                "cannot make a stream of device 1 current: the current device is 0"
            );
            assert!(other.enter().is_err());
            assert!(other.scope(|| ()).is_err());
            assert_eq!(current_on(0), default_stream());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn each_thread_has_its_own_current_stream() {
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(16));
        let threads: Vec<_> = (0..16)
            .map(|t| {
                let barrier = std::sync::Arc::clone(&barrier);
                std::thread::spawn(move || {
                    let own = stand_in(0x1000 + t, 0);
                    let _own = own.enter().unwrap();
                    barrier.wait();
                    let mine = (0..1000).all(|_| current_on(0) == own);
                    barrier.wait();
                    mine
                })
            })
            .collect();
        assert!(threads.into_iter().all(|t| t.join().unwrap()));
    }

    #[test]
    fn default_streams_print_as_cupy_prints_them() {
        assert_eq!(Stream::null().to_string(), "<Stream 0 (device -1)>");
        assert_eq!(Stream::per_thread().to_string(), "<Stream 2 (device -1)>");
        assert_eq!(stand_in(4096, 0).to_string(), "<Stream 4096 (device 0)>");
        assert_ne!(Stream::null(), Stream::per_thread());
        assert_eq!(Stream::null(), Stream::null());
    }
}
