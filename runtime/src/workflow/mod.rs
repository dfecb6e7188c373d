//! Workflows built on the runtime's public API, a layer above the core: the
//! Day 7 tutorial's load-compute-store [`Pipeline`] (chunks of a pinned
//! buffer copied in, computed and copied out across streams), and the
//! [`Timeline`] that records when each step ran, with its renderings (Chrome
//! trace JSON, SVG).
//!
//! No module of the core uses this one (`scripts/module-cycles.py --above
//! workflow` checks it in CI). The layer names the runtime as
//! `gpu_runtime::…`, as a crate of its own would, and uses nothing but what
//! the runtime exports: `runtime/tests/workflow_uses_the_public_api.rs`
//! compiles these files outside the crate, where anything private fails to
//! build.

mod pipeline;
mod timeline;

pub use pipeline::{pipeline, Pipeline};
pub use timeline::{spans_to_chrome_trace, spans_to_svg, Span, SpanKind, Timeline};
