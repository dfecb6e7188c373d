//! How a stream is made ([`StreamOptions`]) and what a handle refers to
//! ([`StreamKind`]).

/// How to create a stream: [`Stream::with_options`](crate::Stream::with_options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamOptions {
    pub(crate) non_blocking: bool,
    pub(crate) priority: i32,
}

impl Default for StreamOptions {
    fn default() -> Self {
        StreamOptions {
            non_blocking: true,
            priority: 0,
        }
    }
}

impl StreamOptions {
    /// Non-blocking, priority 0: what [`Stream::new`](crate::Stream::new) makes.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the stream skips implicit synchronisation with the legacy
    /// default stream (default `true`; `false` gives a blocking stream as
    /// CUDA's `cudaStreamCreate` and Numba's `cuda.stream()` make).
    pub fn non_blocking(mut self, non_blocking: bool) -> Self {
        self.non_blocking = non_blocking;
        self
    }

    /// The stream's priority: lower numbers run first. The device's range is
    /// [`Stream::priority_range`](crate::Stream::priority_range); values outside it are clamped to it.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }
}

/// What a [`Stream`](crate::Stream) handle refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamKind {
    /// A stream this crate created, destroyed with its last handle.
    Owned,
    /// Another library's stream, wrapped by [`Stream::from_external`](crate::Stream::from_external); never destroyed here.
    External,
    /// The device's legacy default stream ([`Stream::null`](crate::Stream::null)).
    LegacyDefault,
    /// A thread's per-thread default stream ([`Stream::per_thread`](crate::Stream::per_thread)).
    PerThreadDefault,
}
