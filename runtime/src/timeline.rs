//! A record of when stream work ran, taken with events, exported as Chrome
//! trace JSON (opens in Perfetto or `chrome://tracing`) and as an SVG drawing
//! with one lane per stream.
//!
//! A span runs from the moment its stream reached it to the moment it
//! finished, so it includes time spent waiting for a copy engine or for
//! multiprocessors busy with other streams' work: as the tutorial's diagram,
//! it shows when each stream was occupied, not how long the hardware took.

use crate::error::Result;
use crate::stream::Event;
use crate::stream::Stream;
use std::fmt::Write as _;

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
    fn label(self) -> &'static str {
        match self {
            SpanKind::CopyIn => "copy in",
            SpanKind::Kernel => "kernel",
            SpanKind::CopyOut => "copy out",
            SpanKind::Other => "other",
        }
    }

    fn colour(self) -> &'static str {
        match self {
            SpanKind::CopyIn => "#4e79a7",
            SpanKind::Kernel => "#59a14f",
            SpanKind::CopyOut => "#e15759",
            SpanKind::Other => "#9c755f",
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
        let result = work()?;
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

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The spans as Chrome trace JSON: one complete event (`"ph":"X"`) per span,
/// times in microseconds, one thread per lane named by `lane_names`.
pub fn to_chrome_trace(spans: &[Span], lane_names: &[String]) -> String {
    let mut events = Vec::new();
    for (lane, name) in lane_names.iter().enumerate() {
        events.push(format!(
            r#"{{"name":"thread_name","ph":"M","pid":1,"tid":{lane},"args":{{"name":{}}}}}"#,
            json_string(name)
        ));
    }
    for span in spans {
        events.push(format!(
            r#"{{"name":{},"cat":{},"ph":"X","ts":{:.3},"dur":{:.3},"pid":1,"tid":{}}}"#,
            json_string(&span.name),
            json_string(span.kind.label()),
            span.start_ms * 1e3,
            (span.end_ms - span.start_ms).max(0.0) * 1e3,
            span.lane
        ));
    }
    format!(
        "{{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n{}\n]}}\n",
        events.join(",\n")
    )
}

/// The spans as an SVG drawing: one lane per stream, time left to right, a
/// box per span coloured by kind, as the Day 7 tutorial's diagram.
pub fn to_svg(spans: &[Span], lane_names: &[String]) -> String {
    let (label_width, width, lane_height, top) = (90.0, 1000.0, 28.0, 30.0);
    let end = spans
        .iter()
        .map(|s| s.end_ms)
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let scale = (width - label_width - 10.0) / end;
    let height = top + lane_height * lane_names.len() as f64 + 40.0;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<text x="4" y="16">time → ({end:.3} ms)</text>"#);
    for (lane, name) in lane_names.iter().enumerate() {
        let y = top + lane as f64 * lane_height;
        let _ = writeln!(
            svg,
            r#"<text class="lane" x="4" y="{:.1}">{}</text>"#,
            y + 17.0,
            escape(name)
        );
        let _ = writeln!(
            svg,
            r##"<line x1="{label_width}" y1="{:.1}" x2="{width}" y2="{:.1}" stroke="#ddd"/>"##,
            y + lane_height,
            y + lane_height
        );
    }
    for span in spans {
        let x = label_width + span.start_ms * scale;
        let w = ((span.end_ms - span.start_ms) * scale).max(0.5);
        let y = top + span.lane as f64 * lane_height + 3.0;
        let _ = writeln!(
            svg,
            r#"<rect class="span" x="{x:.2}" y="{y:.1}" width="{w:.2}" height="{:.1}" fill="{}"><title>{} ({}): {:.3}-{:.3} ms</title></rect>"#,
            lane_height - 6.0,
            span.kind.colour(),
            escape(&span.name),
            span.kind.label(),
            span.start_ms,
            span.end_ms
        );
    }
    let legend_y = top + lane_height * lane_names.len() as f64 + 20.0;
    for (i, kind) in [SpanKind::CopyIn, SpanKind::Kernel, SpanKind::CopyOut]
        .into_iter()
        .enumerate()
    {
        let x = label_width + i as f64 * 110.0;
        let _ = writeln!(
            svg,
            r#"<rect x="{x}" y="{:.1}" width="12" height="12" fill="{}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
            legend_y - 10.0,
            kind.colour(),
            x + 16.0,
            legend_y,
            kind.label()
        );
    }
    svg.push_str("</svg>\n");
    svg
}
