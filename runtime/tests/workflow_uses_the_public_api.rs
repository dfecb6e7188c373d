//! The workflow layer (`src/workflow/`) uses only the runtime's public API:
//! its files are compiled here, outside the runtime crate, as a module of
//! this test crate, where `gpu_runtime::…` is the runtime as users see it.
//! A use of anything private to the runtime (a `pub(crate)` item, a private
//! module) fails to build here, though it would build inside the crate.

#[allow(dead_code, unused_imports)]
#[path = "../src/workflow/mod.rs"]
mod workflow;

/// The copy compiled here works as the runtime's: it renders a timeline,
/// escaping what the formats give a meaning.
#[test]
fn the_layer_compiled_outside_the_runtime_renders_timelines() {
    let spans = [workflow::Span {
        lane: 1,
        kind: workflow::SpanKind::CopyOut,
        name: "chunk <0> \"a\" & b".into(),
        start_ms: 0.5,
        end_ms: 2.0,
    }];
    let lanes = ["stream 0".to_string(), "stream 1".to_string()];
    let svg = workflow::spans_to_svg(&spans, &lanes);
    assert!(
        svg.contains("chunk &lt;0&gt; &quot;a&quot; &amp; b (copy out)"),
        "{svg}"
    );
    assert_eq!(svg.matches("class=\"lane\"").count(), 2, "{svg}");
    let json = workflow::spans_to_chrome_trace(&spans, &lanes);
    assert!(
        json.contains(r#"{"name":"chunk <0> \"a\" & b","cat":"copy out","ph":"X","ts":500.000,"dur":1500.000,"pid":1,"tid":1}"#),
        "{json}"
    );
}
