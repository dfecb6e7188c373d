//! A timeline's spans as an SVG drawing: one lane per stream, time left to
//! right, a box per span coloured by kind, as the Day 7 tutorial's diagram.

use super::{Span, SpanKind};
use std::fmt::Write as _;

/// The spans as an SVG drawing: one lane per stream, time left to right, a
/// box per span coloured by kind, as the Day 7 tutorial's diagram.
pub fn spans_to_svg(spans: &[Span], lane_names: &[String]) -> String {
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
            colour(span.kind),
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
            colour(kind),
            x + 16.0,
            legend_y,
            kind.label()
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The fill colour of a kind's boxes.
fn colour(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::CopyIn => "#4e79a7",
        SpanKind::Kernel => "#59a14f",
        SpanKind::CopyOut => "#e15759",
        SpanKind::Other => "#9c755f",
    }
}

/// `text` with the characters XML gives a meaning escaped.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
