//! The pipeline helper and the timeline: pipelined results equal sequential
//! ones for any chunk and stream count; `Pipeline::run` only queues, and its
//! copies stay tracked even when it fails; operations in one stream stay in
//! order; the timeline exports one lane per stream. The tests take turns:
//! some hold streams.

use crate::common;

use common::{hold, one_at_a_time};
use gpu_kernels::{busy, fill, saxpy};
use gpu_runtime::{
    launch, pipeline, spans_to_chrome_trace, spans_to_svg, DeviceBuffer, Error, PinnedBuffer,
    Pipeline, SpanKind, Stream, Timeline,
};
use std::time::{Duration, Instant};

fn input(n: usize) -> PinnedBuffer<f32> {
    PinnedBuffer::from_slice(&(0..n).map(|i| (i % 977) as f32 * 0.25).collect::<Vec<_>>()).unwrap()
}

#[test]
fn pipelined_results_equal_sequential_ones() {
    let _turn = one_at_a_time();
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
    let _turn = one_at_a_time();
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
        Err(Error::InvalidArgument {
            operation: "Pipeline::run",
            ..
        })
    ));
    assert!(matches!(
        pipeline(&source, &mut right, 2, &[], None, |_, _, _| Ok(())),
        Err(Error::InvalidArgument {
            operation: "Pipeline::new",
            ..
        })
    ));
}

#[test]
fn operations_in_one_stream_stay_in_order() {
    let _turn = one_at_a_time();
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
    let _turn = one_at_a_time();
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
    // In one lane, the steps of a chunk follow each other: one event marks
    // the end of a step and the start of the next (`Timeline::record_next`),
    // also from one chunk to the next chunk of the same stream.
    for chunk in spans.chunks(3) {
        assert_eq!(chunk[0].end_ms, chunk[1].start_ms, "{chunk:?}");
        assert_eq!(chunk[1].end_ms, chunk[2].start_ms, "{chunk:?}");
    }
    for c in 3..6 {
        assert_eq!(spans[3 * (c - 3) + 2].end_ms, spans[3 * c].start_ms);
    }
    let lanes: Vec<String> = (0..3).map(|i| format!("stream {i}")).collect();
    let json = spans_to_chrome_trace(&spans, &lanes);
    assert!(json.starts_with("{\"displayTimeUnit\":\"ms\",\"traceEvents\":["));
    assert_eq!(json.matches("\"ph\":\"X\"").count(), 18);
    assert_eq!(json.matches("\"thread_name\"").count(), 3);
    assert!(json.contains("\"name\":\"chunk 5\",\"cat\":\"copy out\""));
    let svg = spans_to_svg(&spans, &lanes);
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("class=\"lane\"").count(), 3);
    assert_eq!(svg.matches("class=\"span\"").count(), 18);
}

fn busy_on(
    stream: &Stream,
    x: gpu_runtime::DeviceView<'_, f32>,
    out: gpu_runtime::DeviceViewMut<'_, f32>,
) -> gpu_runtime::Result<()> {
    launch!(busy[x.len().div_ceil(256), 256, stream](x, 5, out))
}

#[test]
fn run_only_queues_and_reading_the_output_waits() {
    let _turn = one_at_a_time();
    let n = 8192;
    let source = input(n);
    let streams: Vec<Stream> = (0..2).map(|_| Stream::new().unwrap()).collect();
    let mut reference = PinnedBuffer::<f32>::new(n).unwrap();
    pipeline(&source, &mut reference, 1, &streams[..1], None, busy_on).unwrap();
    let mut output = PinnedBuffer::<f32>::new(n).unwrap();
    let mut pipe = Pipeline::new(&streams).unwrap();
    pipe.run(&source, &mut output, 4, None, busy_on).unwrap(); // allocates
    output.as_slice().unwrap();
    let timers: Vec<_> = streams.iter().map(|s| hold(s, 300)).collect();
    let start = Instant::now();
    pipe.run(&source, &mut output, 4, None, busy_on).unwrap();
    assert!(
        start.elapsed() < Duration::from_millis(200),
        "run returned while its streams were held"
    );
    assert!(!output.is_idle().unwrap());
    assert_eq!(output.as_slice().unwrap(), reference.as_slice().unwrap());
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "as_slice waited for the held copies"
    );
    for t in timers {
        t.join().unwrap();
    }
}

#[test]
fn a_failing_or_panicking_run_still_tracks_its_copies() {
    let _turn = one_at_a_time();
    let n = 8192;
    let mut source = input(n);
    let streams: Vec<Stream> = (0..2).map(|_| Stream::new().unwrap()).collect();
    let mut output = PinnedBuffer::<f32>::new(n).unwrap();
    let mut pipe = Pipeline::new(&streams).unwrap();
    pipe.run(&source, &mut output, 4, None, busy_on).unwrap();
    pipe.synchronize().unwrap();

    // The kernel of the third chunk fails: copies of chunks 0 to 2 are queued.
    let timers: Vec<_> = streams.iter().map(|s| hold(s, 300)).collect();
    let start = Instant::now();
    let mut calls = 0;
    let err = pipe
        .run(&source, &mut output, 4, None, |s, x, out| {
            calls += 1;
            if calls == 3 {
                return Err(Error::InvalidArgument {
                    operation: "the test's kernel",
                    reason: "test failure".into(),
                });
            }
            busy_on(s, x, out)
        })
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }));
    // Writing the input waits for the queued copies that read it.
    source.as_mut_slice().unwrap().fill(0.0);
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "as_mut_slice waited for the held copies"
    );
    for t in timers {
        t.join().unwrap();
    }

    // The kernel of the second chunk panics.
    let timers: Vec<_> = streams.iter().map(|s| hold(s, 300)).collect();
    let start = Instant::now();
    let mut calls = 0;
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pipe.run(&source, &mut output, 4, None, |s, x, out| {
            calls += 1;
            assert!(calls < 2, "the kernel closure panics");
            busy_on(s, x, out)
        })
    }));
    assert!(panicked.is_err());
    // Reading the output waits for the queued copy into it.
    output.as_slice().unwrap();
    assert!(
        start.elapsed() >= Duration::from_millis(250),
        "as_slice waited for the held copy out"
    );
    for t in timers {
        t.join().unwrap();
    }
}

#[test]
fn a_pipeline_takes_mapped_buffers_too() {
    let _turn = one_at_a_time();
    let n = 5000;
    let source = input(n);
    let mapped_source =
        gpu_runtime::MappedBuffer::mapped_from_slice(source.as_slice().unwrap()).unwrap();
    let streams: Vec<Stream> = (0..3).map(|_| Stream::new().unwrap()).collect();
    let mut reference = PinnedBuffer::<f32>::new(n).unwrap();
    pipeline(&source, &mut reference, 5, &streams, None, busy_on).unwrap();
    let mut output = gpu_runtime::MappedBuffer::<f32>::new_mapped(n).unwrap();
    pipeline(&mapped_source, &mut output, 5, &streams, None, busy_on).unwrap();
    assert_eq!(output.as_slice().unwrap(), reference.as_slice().unwrap());
}
