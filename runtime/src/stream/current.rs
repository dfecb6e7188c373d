//! The current stream: kept per host thread and per device.
//!
//! Work issued without a stream (launches, copies, reductions, event records)
//! goes to the calling thread's current stream on the current device. It
//! starts as a default stream (see [`Stream`]) and changes in two ways, as in
//! CuPy:
//!
//! - scoped, CuPy's `with stream:` — [`Stream::enter`] returns a guard, and
//!   [`Stream::scope`] runs a closure; leaving restores exactly the stream the
//!   scope replaced. Guards dropped out of order never leave a stream current
//!   once all of them are gone (see [`crate::scope_stack`]).
//! - unscoped, CuPy's `stream.use()` — [`Stream::make_current`]: current until
//!   changed; inside a scope, until that scope ends (CuPy forgets such a
//!   `use()` at the end of the enclosing `with` block too).
//!
//! Where this differs from CuPy (its `test_mix_use_context`): in
//! `with s1: s2.use(); with s3: ...`, CuPy makes `s1` current again when the
//! inner block ends (the enclosing block's stream), this crate `s2` (the
//! stream the inner scope replaced); and a `use()` *before* a `with` block is
//! current again after the block here, where CuPy falls back to the default
//! stream. The rule here is the one a guard follows in Rust: a scope undoes
//! exactly its own change, so code inside a scope cannot tell whether it was
//! entered from a `make_current` or from another scope.

use super::Stream;
use crate::device::{self, Device};
use crate::error::{Error, Result};
use crate::scope_stack::{ScopeId, ScopeStack};
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
    /// Per device ordinal: the streams made current (`None`: the default stream).
    static CURRENT: RefCell<Vec<ScopeStack<Option<Stream>>>> = const { RefCell::new(Vec::new()) };
}

pub(super) fn default_stream() -> Stream {
    if per_thread_is_default() {
        Stream::per_thread()
    } else {
        Stream::null()
    }
}

/// Runs `f` on device `ordinal`'s stack of current streams.
fn with_stack<R>(ordinal: usize, f: impl FnOnce(&mut ScopeStack<Option<Stream>>) -> R) -> R {
    CURRENT.with(|current| {
        let mut current = current.borrow_mut();
        if current.len() <= ordinal {
            current.resize_with(ordinal + 1, || ScopeStack::new(None));
        }
        f(&mut current[ordinal])
    })
}

/// The calling thread's current stream on the current device (CuPy's
/// `cp.cuda.get_current_stream()`).
pub fn current_stream() -> Result<Stream> {
    Ok(current_on(Device::current()?.ordinal()))
}

/// The calling thread's current stream on device `ordinal`.
pub(crate) fn current_on(ordinal: usize) -> Stream {
    with_stack(ordinal, |stack| stack.current().clone()).unwrap_or_else(default_stream)
}

/// Checks that `stream` can be current: it belongs to the current device.
fn check_current_device(stream: &Stream) -> Result<usize> {
    let current = device::current_ordinal();
    if stream.device() != current {
        return Err(Error::StreamOnOtherDevice {
            stream_device: stream.device(),
            current_device: current,
        });
    }
    Ok(current)
}

/// [`Stream::make_current`].
pub(crate) fn make_current(stream: &Stream) -> Result<()> {
    let ordinal = check_current_device(stream)?;
    with_stack(ordinal, |stack| stack.set(Some(stream.clone())));
    Ok(())
}

/// [`Stream::enter`].
pub(crate) fn enter(stream: &Stream) -> Result<StreamScope<'_>> {
    let ordinal = check_current_device(stream)?;
    let id = with_stack(ordinal, |stack| stack.push(Some(stream.clone())));
    Ok(StreamScope {
        ordinal,
        id,
        _stream: PhantomData,
        _not_send: PhantomData,
    })
}

/// The guard of [`Stream::enter`]: while it lives, its stream is current on
/// this thread; dropping it restores the stream it replaced.
#[must_use = "the stream is current only while the guard lives"]
pub struct StreamScope<'a> {
    ordinal: usize,
    id: ScopeId,
    _stream: PhantomData<&'a Stream>,
    /// The current stream is per thread: the guard stays on its thread.
    _not_send: PhantomData<*const ()>,
}

impl Drop for StreamScope<'_> {
    fn drop(&mut self) {
        with_stack(self.ordinal, |stack| stack.remove(self.id));
    }
}

#[cfg(test)]
mod tests {
    //! The bookkeeping, without a GPU: the streams here are stand-in handles
    //! that never reach the driver (nothing here calls it).
    use super::*;
    use crate::backend::StreamHandle;
    use crate::stream::StreamKind;

    fn stand_in(handle: usize, ordinal: usize) -> Stream {
        let handle = StreamHandle {
            raw: handle,
            device: ordinal,
        };
        Stream::from_parts(handle, ordinal, StreamKind::External, None)
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
                "a scope forgets a make_current made inside it, and restores the one before it"
            );
        })
        .join()
        .unwrap();
    }

    #[test]
    fn guards_dropped_out_of_order_leave_no_stream_current() {
        std::thread::spawn(|| {
            let (a, b) = (stand_in(0x100, 0), stand_in(0x200, 0));
            let outer = a.enter().unwrap();
            let inner = b.enter().unwrap();
            drop(outer);
            assert_eq!(current_on(0), b, "the inner guard is still alive");
            drop(inner);
            assert_eq!(current_on(0), default_stream());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn cupy_mix_use_context_as_this_crate_answers_it() {
        std::thread::spawn(|| {
            let (s1, s2, s3) = (stand_in(0x100, 0), stand_in(0x200, 0), stand_in(0x300, 0));
            {
                let _s1 = s1.enter().unwrap();
                s2.make_current().unwrap();
                assert_eq!(current_on(0), s2);
                {
                    let _s3 = s3.enter().unwrap();
                    assert_eq!(current_on(0), s3);
                }
                // CuPy answers s1 here; this crate restores what the scope replaced.
                assert_eq!(current_on(0), s2);
            }
            // The use() inside the block is forgotten, as in CuPy.
            assert_eq!(current_on(0), default_stream());
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
