//! Named ranges and marks for NVIDIA's tools (NVTX): Nsight Systems shows
//! them on its timeline with the kernels and copies queued inside them, and
//! Nsight Compute filters the kernels it profiles by them
//! (`ncu --nvtx --nvtx-include "name/"`).
//!
//! The ranges are the host thread's (NVTX push/pop ranges): a range covers
//! the work the thread queued while it was open, which the tools relate to
//! that work on the device. [`Pipeline`](crate::Pipeline) steps and
//! [`Timeline`](crate::Timeline) spans open one each, named as the timeline
//! names the span (`"kernel: chunk 3"`).
//!
//! With the crate's `nvtx` feature the calls go to NVTX3 (the `nvtx` crate,
//! NVIDIA's header-only C API compiled with the system's C compiler), which
//! does nothing but one branch until a tool injects itself. Without the
//! feature (the default) every call is empty; [`ENABLED`] says which.
//!
//! ```
//! let _range = gpu_runtime::nvtx::range("load weights");
//! gpu_runtime::nvtx::mark("weights loaded");
//! // `_range` ends here, when it is dropped.
//! ```

use std::marker::PhantomData;

/// Whether NVTX calls reach the tools (the `nvtx` feature).
pub const ENABLED: bool = cfg!(feature = "nvtx");

/// An open NVTX range of the calling thread, ended when dropped. It stays
/// on the thread that opened it (NVTX ranges are per thread: ended on
/// another thread, it would end that thread's innermost range), so it is
/// neither `Send` nor `Sync`:
///
/// ```compile_fail
/// let range = gpu_runtime::nvtx::range("step");
/// std::thread::spawn(move || drop(range)); // error: `*const ()` cannot be sent between threads
/// ```
#[must_use = "the range ends when this guard is dropped"]
pub struct Range {
    /// Whether a range was pushed (the feature is on).
    pushed: bool,
    _thread_bound: PhantomData<*const ()>,
}

/// Opens a range named `name` on the calling thread, until the returned
/// guard is dropped. Ranges nest.
pub fn range(name: impl AsRef<str>) -> Range {
    push(name.as_ref())
}

/// As [`range`], with the name made only when NVTX is enabled: for names
/// formatted on a hot path (`range_with(|| format!("chunk {c}"))`).
pub fn range_with(name: impl FnOnce() -> String) -> Range {
    if ENABLED {
        push(&name())
    } else {
        push("")
    }
}

/// Marks an instant named `name` on the calling thread.
pub fn mark(name: impl AsRef<str>) {
    #[cfg(feature = "nvtx")]
    nvtx::mark!("{}", without_nul(name.as_ref()));
    #[cfg(not(feature = "nvtx"))]
    let _ = name;
}

#[cfg(feature = "nvtx")]
fn push(name: &str) -> Range {
    nvtx::range_push!("{}", without_nul(name));
    Range {
        pushed: true,
        _thread_bound: PhantomData,
    }
}

#[cfg(not(feature = "nvtx"))]
fn push(_name: &str) -> Range {
    Range {
        pushed: false,
        _thread_bound: PhantomData,
    }
}

/// `name` with any NUL byte (which ends a C string) shown as `\0`, so that
/// NVTX receives the whole name.
#[cfg(feature = "nvtx")]
fn without_nul(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains('\0') {
        name.replace('\0', "\\0").into()
    } else {
        name.into()
    }
}

impl Range {
    /// Whether the range reached NVTX (the `nvtx` feature is on).
    pub fn is_recorded(&self) -> bool {
        self.pushed
    }
}

impl Drop for Range {
    fn drop(&mut self) {
        #[cfg(feature = "nvtx")]
        if self.pushed {
            nvtx::range_pop!();
        }
    }
}

impl std::fmt::Debug for Range {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("nvtx::Range")
            .field("recorded", &self.pushed)
            .finish()
    }
}
