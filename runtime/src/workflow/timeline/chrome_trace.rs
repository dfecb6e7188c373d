//! A timeline's spans as Chrome trace JSON (the Trace Event Format), which
//! Perfetto and `chrome://tracing` open.

use super::Span;
use std::fmt::Write as _;

/// The spans as Chrome trace JSON: one complete event (`"ph":"X"`) per span,
/// times in microseconds, one thread per lane named by `lane_names`.
pub fn spans_to_chrome_trace(spans: &[Span], lane_names: &[String]) -> String {
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

/// `text` as a JSON string literal, quoted and escaped.
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
