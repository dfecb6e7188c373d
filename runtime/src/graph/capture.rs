//! Capturing the work queued on a stream into a [`Graph`].

use super::exec::Graph;
use crate::backend::{driver, GraphHandle};
use crate::capture::{registry, CapturedKernel, InProgress};
use crate::error::{Error, Result};
use crate::memory::tracking;
use crate::stream::{CaptureRecord, Stream};
use std::sync::Arc;

/// A capture in progress on a stream, from
/// [`Stream::begin_capture`]: work queued on the stream (and on streams
/// that wait for events recorded on it) is recorded rather than run, until
/// [`end`](Capture::end). Dropping it without `end` ends the capture and
/// discards the graph.
#[must_use = "the capture lasts until `end` (or the guard is dropped, discarding the graph)"]
pub struct Capture<'s> {
    stream: &'s Stream,
    state: Option<Arc<CaptureRecord>>,
}

impl Stream {
    /// Begins capturing the work queued on this stream into a graph (CuPy's
    /// `stream.begin_capture()`). The default streams cannot be captured.
    ///
    /// ```no_run
    /// use gpu_runtime::{launch, DeviceBuffer, Stream};
    /// let stream = Stream::new()?;
    /// let mut x = DeviceBuffer::<f32>::device_array(1024)?;
    /// let capture = stream.begin_capture()?;
    /// launch!(gpu_kernels::fill[4, 256, stream](1.0f32, &mut x))?;
    /// let graph = capture.end()?;
    /// graph.instantiate()?.launch(&stream)?;
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn begin_capture(&self) -> Result<Capture<'_>> {
        if self.is_default() {
            return Err(Error::Capture {
                capture: 0,
                reason: format!(
                    "{self} is a default stream, which cannot be captured; capture a stream made by `Stream::new`"
                ),
            });
        }
        let state = begin(self)?;
        Ok(Capture {
            stream: self,
            state: Some(state),
        })
    }

    /// Captures the work `work` queues on this stream (it is given the
    /// stream) into a graph. An error of `work` ends the capture and is
    /// returned, the graph discarded.
    ///
    /// ```no_run
    /// use gpu_runtime::{launch, DeviceBuffer, Stream};
    /// let stream = Stream::new()?;
    /// let x = DeviceBuffer::to_device_sync(&[1.0f32; 1024], &stream)?;
    /// let mut y = DeviceBuffer::<f32>::device_array(1024)?;
    /// let graph = stream.capture(|s| launch!(gpu_kernels::saxpy[4, 256, s](2.0, &x, &x, &mut y)))?;
    /// let exec = graph.instantiate()?;
    /// for _ in 0..10 {
    ///     exec.launch(&stream)?;
    /// }
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn capture(&self, work: impl FnOnce(&Stream) -> Result<()>) -> Result<Graph> {
        let capture = self.begin_capture()?;
        let worked = work(self);
        let graph = capture.end();
        worked?;
        graph
    }
}

impl Capture<'_> {
    /// The capture's number, as errors name it.
    pub fn id(&self) -> u64 {
        self.state.as_ref().map_or(0, |s| s.id)
    }

    /// Ends the capture and returns its graph. Streams forked into the
    /// capture are joined back first, so the graph's launches complete when
    /// all of its work has. Fails if buffers allocated inside the capture are
    /// still alive (their memory belongs to the graph), or if the driver
    /// invalidated the capture.
    pub fn end(mut self) -> Result<Graph> {
        let state = self.state.take().expect("a capture ends once");
        finish(self.stream, &state)
    }
}

/// Ends `state`, begun on `stream`: the graph, or the first error.
fn finish(stream: &Stream, state: &Arc<CaptureRecord>) -> Result<Graph> {
    let ended = end(stream, state);
    let memory = tracking::end_of_capture(state);
    let (handle, kernels, forked) = ended?;
    let escaped = memory.escaped;
    let graph = Graph::new(handle, stream.device(), state.id, kernels, memory, forked);
    if escaped > 0 {
        drop(graph);
        return Err(Error::CaptureEscaped {
            capture: state.id,
            buffers: escaped,
        });
    }
    Ok(graph)
}

impl Drop for Capture<'_> {
    fn drop(&mut self) {
        if let Some(state) = self.state.take() {
            // Abandoned (an early return, a panic): the graph is discarded.
            let _ = finish(self.stream, &state);
        }
    }
}

impl std::fmt::Debug for Capture<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Capture {} on {}", self.id(), self.stream)
    }
}

/// Begins a capture on `stream`: it joins the new capture (recording where
/// its real work ends), then the driver captures what is queued on it.
fn begin(stream: &Stream) -> Result<Arc<CaptureRecord>> {
    stream.device_state("Stream::begin_capture")?;
    if let Some(capture) = stream.active_capture() {
        return Err(Error::Capture {
            capture: capture.id,
            reason: format!("{stream} already takes part in this capture"),
        });
    }
    let capture = Arc::new(CaptureRecord::new(stream.clone(), stream.device()));
    stream.join_capture(&capture)?;
    // Registered before the driver's begin: from then on device-wide waits
    // and the legacy default stream would meet the capture.
    registry::began(stream.device(), Arc::clone(&capture) as Arc<dyn InProgress>);
    if let Err(e) = driver().stream_begin_capture(stream.handle()) {
        stream.leave_capture();
        capture.end();
        registry::ended(stream.device(), capture.id);
        return Err(stream.error(e));
    }
    Ok(capture)
}

/// Ends `capture`, begun on `stream`: every stream that joined it is joined
/// back into `stream` first (so the graph ends when all of its work has),
/// then every stream leaves it. Returns the graph, the kernel launches it
/// captured, and whether other streams joined it (the graph may then have
/// unordered branches); or the error of any step, after the capture has
/// ended in every case.
fn end(
    stream: &Stream,
    capture: &Arc<CaptureRecord>,
) -> Result<(GraphHandle, Vec<CapturedKernel>, bool)> {
    let joined = capture
        .forked()
        .iter()
        .try_for_each(|member| stream.wait_for(member));
    let ended = driver()
        .stream_end_capture(stream.handle())
        .map_err(|e| stream.error(e));
    let (members, kernels, after_end) = capture.end();
    stream.leave_capture();
    for member in &members {
        member.leave_capture();
    }
    registry::ended(stream.device(), capture.id);
    for work in after_end {
        work();
    }
    let graph = ended?;
    if let Err(e) = joined {
        let _ = driver().graph_destroy(graph);
        return Err(e);
    }
    Ok((graph, kernels, !members.is_empty()))
}
