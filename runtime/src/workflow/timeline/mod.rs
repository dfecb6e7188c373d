//! A record of when stream work ran, taken with events, exported as Chrome
//! trace JSON (opens in Perfetto or `chrome://tracing`, `chrome_trace.rs`)
//! and as an SVG drawing with one lane per stream (`svg.rs`).
//!
//! Each span's work is queued inside an NVTX range of the same name
//! (`"kernel: chunk 3"`, see [`gpu_runtime::nvtx`]), so Nsight's timeline and
//! this one name the work alike.
//!
//! A span runs from the moment its stream reached it to the moment it
//! finished, so it includes time spent waiting for a copy engine or for
//! multiprocessors busy with other streams' work: as the tutorial's diagram,
//! it shows when each stream was occupied, not how long the hardware took.

mod chrome_trace;
mod svg;

pub use chrome_trace::spans_to_chrome_trace;
pub use svg::spans_to_svg;

use gpu_runtime::{nvtx, Event, Result, Stream};

/// What a span of stream work was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// A host-to-device copy.
    CopyIn,
    /// A kernel.
    Kernel,
    /// A device-to-host copy.
    CopyOut,
    /// Anything else.
    Other,
}

impl SpanKind {
    /// The kind's name in the renderings and in the span's NVTX range
    /// (`"kernel: chunk 3"`).
    pub fn label(self) -> &'static str {
        match self {
            SpanKind::CopyIn => "copy in",
            SpanKind::Kernel => "kernel",
            SpanKind::CopyOut => "copy out",
            SpanKind::Other => "other",
        }
    }
}

/// One piece of stream work, in milliseconds from the timeline's origin.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The lane (usually the stream's index).
    pub lane: usize,
    /// What it was.
    pub kind: SpanKind,
    /// Its label, e.g. `chunk 3`.
    pub name: String,
    /// When it started.
    pub start_ms: f64,
    /// When it ended.
    pub end_ms: f64,
}

struct Pending {
    lane: usize,
    kind: SpanKind,
    name: String,
    /// Indices into `Timeline::events`.
    start: usize,
    end: usize,
}

/// Records spans of stream work between events.
pub struct Timeline {
    origin: Event,
    events: Vec<Event>,
    pending: Vec<Pending>,
    /// Per stream, the end event of the last span recorded on it.
    last_end: Vec<(Stream, usize)>,
}

impl Timeline {
    /// A timeline whose origin is now: records an event on `stream` and waits
    /// for it, so every span recorded later starts after it.
    pub fn new(stream: &Stream) -> Result<Timeline> {
        let origin = stream.record()?;
        origin.synchronize()?;
        Ok(Timeline {
            origin,
            events: Vec::new(),
            pending: Vec::new(),
            last_end: Vec::new(),
        })
    }

    /// Runs `work`, which queues work on `stream`, between two events, and
    /// records the span in `lane`.
    pub fn record<R>(
        &mut self,
        stream: &Stream,
        lane: usize,
        kind: SpanKind,
        name: impl Into<String>,
        work: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        let start = self.push_event(stream)?;
        self.finish(stream, lane, kind, name.into(), start, work)
    }

    /// As [`record`](Self::record), for work queued on `stream` right after
    /// the last span recorded there, with nothing queued on `stream` in
    /// between: that span's end event is this span's start, so the timeline
    /// records one event per span instead of two (each timed event costs the
    /// device a little time). Without an earlier span on `stream`, the same
    /// as `record`.
    pub fn record_next<R>(
        &mut self,
        stream: &Stream,
        lane: usize,
        kind: SpanKind,
        name: impl Into<String>,
        work: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        let start = match self.last_end.iter().find(|(s, _)| s == stream) {
            Some(&(_, end)) => end,
            None => self.push_event(stream)?,
        };
        self.finish(stream, lane, kind, name.into(), start, work)
    }

    fn push_event(&mut self, stream: &Stream) -> Result<usize> {
        self.events.push(stream.record()?);
        Ok(self.events.len() - 1)
    }

    fn finish<R>(
        &mut self,
        stream: &Stream,
        lane: usize,
        kind: SpanKind,
        name: String,
        start: usize,
        work: impl FnOnce() -> Result<R>,
    ) -> Result<R> {
        // Nsight shows the work queued here under the span's own name.
        let range = nvtx::range_with(|| format!("{}: {name}", kind.label()));
        let result = work()?;
        drop(range);
        let end = self.push_event(stream)?;
        self.pending.push(Pending {
            lane,
            kind,
            name,
            start,
            end,
        });
        match self.last_end.iter_mut().find(|(s, _)| s == stream) {
            Some(last) => last.1 = end,
            None => self.last_end.push((stream.clone(), end)),
        }
        Ok(result)
    }

    /// The spans, once their work has finished, in recording order.
    pub fn spans(&self) -> Result<Vec<Span>> {
        self.pending
            .iter()
            .map(|p| {
                Ok(Span {
                    lane: p.lane,
                    kind: p.kind,
                    name: p.name.clone(),
                    start_ms: Event::elapsed_ms(&self.origin, &self.events[p.start])? as f64,
                    end_ms: Event::elapsed_ms(&self.origin, &self.events[p.end])? as f64,
                })
            })
            .collect()
    }
}
