//! The pipeline helper and the timeline: pipelined results equal sequential
//! ones for any chunk and stream count; operations in one stream stay in
//! order; the timeline exports one lane per stream.

use gpu_kernels::{busy, fill, saxpy};
use gpu_runtime::timeline::{to_chrome_trace, to_svg, SpanKind, Timeline};
use gpu_runtime::{launch, pipeline, DeviceBuffer, Error, PinnedBuffer, Stream};

fn input(n: usize) -> PinnedBuffer<f32> {
    PinnedBuffer::from_slice(&(0..n).map(|i| (i % 977) as f32 * 0.25).collect::<Vec<_>>()).unwrap()
}

#[test]
fn pipelined_results_equal_sequential_ones() {
    let n = 10_007;
    let source = input(n);
    let streams: Vec<Stream> = (0..8).map(|_| Stream::new().unwrap()).collect();
    let mut reference = PinnedBuffer::<f32>::new(n).unwrap();
    pipeline(
        &source,
        &mut reference,
        1,
        &streams[..1],
        None,
        |s, x, out| Ok(launch!(busy[x.len().div_ceil(256), 256, s](x, 17, out))?),
    )
    .unwrap();
    let reference = reference.as_slice().unwrap().to_vec();
    for (chunks, count) in [(2, 2), (16, 4), (7, 8), (100, 3), (16, 1)] {
        let mut output = PinnedBuffer::<f32>::new(n).unwrap();
        pipeline(
            &source,
            &mut output,
            chunks,
            &streams[..count],
            None,
            |s, x, out| Ok(launch!(busy[x.len().div_ceil(256), 256, s](x, 17, out))?),
        )
        .unwrap();
        assert_eq!(
            output.as_slice().unwrap(),
            &reference[..],
            "{chunks} chunks on {count} streams"
        );
    }
}

#[test]
fn bad_pipelines_are_errors() {
    let streams = [Stream::new().unwrap()];
    let source = input(10);
    let mut wrong = PinnedBuffer::<f32>::new(9).unwrap();
    let err = pipeline(&source, &mut wrong, 2, &streams, None, |_, _, _| Ok(())).unwrap_err();
    assert_eq!(
        err,
        Error::LengthMismatch {
            operation: "pipeline",
            destination: 9,
            source: 10
        }
    );
    let mut right = PinnedBuffer::<f32>::new(10).unwrap();
    assert!(matches!(
        pipeline(&source, &mut right, 0, &streams, None, |_, _, _| Ok(())),
        Err(Error::InvalidPipeline { .. })
    ));
    assert!(matches!(
        pipeline(&source, &mut right, 2, &[], None, |_, _, _| Ok(())),
        Err(Error::InvalidPipeline { .. })
    ));
}

#[test]
fn operations_in_one_stream_stay_in_order() {
    let stream = Stream::new().unwrap();
    let n = 1 << 14;
    let mut x = DeviceBuffer::<f32>::zeroed_on(n, &stream).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed_on(n, &stream).unwrap();
    let mut host = PinnedBuffer::<f32>::new(n).unwrap();
    for round in 0..10u32 {
        // fill, then read into y, then overwrite x: y must see this round's fill.
        launch!(fill[n / 256, 256, stream](round as f32, &mut x)).unwrap();
        launch!(saxpy[n / 256, 256, stream](2.0, &x, &x, &mut y)).unwrap();
        launch!(fill[n / 256, 256, stream](-1.0f32, &mut x)).unwrap();
        y.copy_to_pinned(&mut host, &stream).unwrap();
        assert!(
            host.as_slice()
                .unwrap()
                .iter()
                .all(|&v| v == 3.0 * round as f32),
            "round {round}"
        );
    }
}

#[test]
fn the_timeline_has_a_lane_per_stream_and_a_span_per_step() {
    let streams: Vec<Stream> = (0..3).map(|_| Stream::new().unwrap()).collect();
    let source = input(4096);
    let mut output = PinnedBuffer::<f32>::new(4096).unwrap();
    let mut timeline = Timeline::new(&streams[0]).unwrap();
    pipeline(
        &source,
        &mut output,
        6,
        &streams,
        Some(&mut timeline),
        |s, x, out| Ok(launch!(busy[x.len().div_ceil(256), 256, s](x, 3, out))?),
    )
    .unwrap();
    let spans = timeline.spans().unwrap();
    assert_eq!(spans.len(), 6 * 3, "copy in, kernel, copy out per chunk");
    for (i, span) in spans.iter().enumerate() {
        assert_eq!(
            span.lane,
            (i / 3) % 3,
            "chunk {} runs on stream {}",
            i / 3,
            (i / 3) % 3
        );
        assert_eq!(
            span.kind,
            [SpanKind::CopyIn, SpanKind::Kernel, SpanKind::CopyOut][i % 3]
        );
        assert!(
            span.start_ms >= 0.0 && span.end_ms >= span.start_ms,
            "{span:?}"
        );
    }
    // In one lane, the steps of a chunk follow each other.
    for chunk in spans.chunks(3) {
        assert!(
            chunk[0].end_ms <= chunk[1].start_ms + 1e-3
                && chunk[1].end_ms <= chunk[2].start_ms + 1e-3,
            "{chunk:?}"
        );
    }
    let lanes: Vec<String> = (0..3).map(|i| format!("stream {i}")).collect();
    let json = to_chrome_trace(&spans, &lanes);
    assert!(json.starts_with("{\"displayTimeUnit\":\"ms\",\"traceEvents\":["));
    assert_eq!(json.matches("\"ph\":\"X\"").count(), 18);
    assert_eq!(json.matches("\"thread_name\"").count(), 3);
    assert!(json.contains("\"name\":\"chunk 5\",\"cat\":\"copy out\""));
    let svg = to_svg(&spans, &lanes);
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("class=\"lane\"").count(), 3);
    assert_eq!(svg.matches("class=\"span\"").count(), 18);
}
