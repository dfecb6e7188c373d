//! The capture rules CUDA enforces, refused by the runtime before the driver
//! sees them: while a blocking stream of a device captures, any use of the
//! device's legacy default stream is an `Error::InCapture` naming the capture
//! and the operation, and the capture goes on. Ported cases are named after
//! CuPy's tests (`cupy/cuda/tests/test_graph.py`, `test_stream.py`).
//!
//! Every case runs in the process's default-stream mode, and
//! `all_cases_in_the_per_thread_default_stream_mode` runs them all again in a
//! child process with the per-thread default stream as the initial current
//! stream.
//!
//! A binary of its own: the rules are device-wide. While a test here has a
//! blocking stream capturing, every use of the legacy default stream in the
//! process is refused (another library's, such as cudarc's, fails in the
//! driver and invalidates the capture), and a device-wide wait names
//! whichever capture is open; tests of other concepts running beside them
//! in one process failed so on an H100.

mod common;

use gpu_kernels::{add_kernel, fill, saxpy};
use gpu_runtime::{
    current_stream, launch, Device, DeviceBuffer, Error, Stream, StreamOptions,
    PER_THREAD_DEFAULT_STREAM_ENV,
};

const N: usize = 100;

/// The rule is device-wide: while one test's blocking stream captures,
/// another's use of the legacy default stream would be refused. The tests
/// here take turns (and the binary is theirs alone).
fn turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn blocking_stream() -> Stream {
    Stream::with_options(StreamOptions::new().non_blocking(false)).unwrap()
}

fn legacy_mode() -> bool {
    !std::env::var(PER_THREAD_DEFAULT_STREAM_ENV).is_ok_and(|v| v == "1")
}

fn random_input(stream: &Stream) -> (Vec<f32>, DeviceBuffer<f32>) {
    let host: Vec<f32> = (0..N).map(|i| ((i * 37 % 101) as f32) / 101.0).collect();
    let device = DeviceBuffer::to_device_sync(&host, stream).unwrap();
    (host, device)
}

/// The capture `result` was refused for, and by which operation.
fn refused(result: gpu_runtime::Result<impl std::fmt::Debug>) -> (u64, &'static str, String) {
    match result {
        Err(Error::InCapture {
            capture,
            operation,
            reason,
            ..
        }) => (capture, operation, reason.to_string()),
        other => panic!("expected Error::InCapture, got {other:?}"),
    }
}

/// CuPy's `test_null_stream_cannot_capture`: while a blocking stream
/// captures, asking the legacy default stream whether it captures is refused
/// (CuPy gets `cudaErrorStreamCaptureImplicit` and loses the capture; here it
/// is `Error::InCapture` and the capture goes on), and the graph runs right.
#[test]
fn cupy_test_null_stream_cannot_capture() {
    let _turn = turn();
    let s = blocking_stream();
    let (a, a_dev) = random_input(&s);
    let fours = DeviceBuffer::to_device_sync(&[4.0f32; N], &s).unwrap();
    let mut b = DeviceBuffer::<f32>::zeroed_on(N, &s).unwrap();
    let scope = s.enter().unwrap();
    let capture = s.begin_capture().unwrap();
    launch!(add_kernel[1, 128](&a_dev, &fours, &mut b)).unwrap();
    assert!(s.is_capturing().unwrap());
    let (id, operation, reason) = refused(Stream::null().is_capturing());
    assert_eq!(id, capture.id());
    assert_eq!(operation, "Stream::is_capturing");
    assert!(reason.contains("legacy default stream"), "{reason}");
    let graph = capture.end().unwrap();
    drop(scope);
    assert!(!s.is_capturing().unwrap());
    assert!(!Stream::null().is_capturing().unwrap());
    graph.instantiate().unwrap().launch(&s).unwrap();
    s.synchronize().unwrap();
    let expected: Vec<f32> = a.iter().map(|x| x + 4.0).collect();
    assert_eq!(b.copy_to_host_sync(&s).unwrap(), expected);
}

/// CuPy's `test_stream_is_capturing`: a non-blocking stream's capture leaves
/// the legacy default stream usable, and it is not capturing.
#[test]
fn cupy_test_stream_is_capturing() {
    let _turn = turn();
    let s = Stream::new().unwrap();
    let (a, a_dev) = random_input(&s);
    let mut b = DeviceBuffer::<f32>::zeroed_on(N, &s).unwrap();
    let graph = {
        let _scope = s.enter().unwrap();
        let capture = s.begin_capture().unwrap();
        assert!(s.is_capturing().unwrap());
        assert!(!Stream::null().is_capturing().unwrap());
        launch!(saxpy[1, 128](3.0, &a_dev, &a_dev, &mut b)).unwrap();
        capture.end().unwrap()
    };
    assert!(!s.is_capturing().unwrap());
    assert!(!Stream::null().is_capturing().unwrap());
    graph.instantiate().unwrap().launch(&s).unwrap();
    s.synchronize().unwrap();
    // saxpy: 3a + a.
    let expected: Vec<f32> = a.iter().map(|x| 3.0 * x + x).collect();
    assert_eq!(b.copy_to_host_sync(&s).unwrap(), expected);
}

/// The helpers of CuPy's `test_capture_run_on_same_stream`: each queues its
/// work on the current stream and returns the result.
fn helper(n: usize, a: &DeviceBuffer<f32>) -> DeviceBuffer<f32> {
    let mut out = DeviceBuffer::<f32>::device_array(N).unwrap();
    match n {
        // An element-wise kernel.
        0 => launch!(saxpy[1, 128](2.0, a, a, &mut out)).unwrap(),
        // Two kernels, the second reading the first's result.
        1 => {
            let mut t = DeviceBuffer::<f32>::device_array(N).unwrap();
            launch!(fill[1, 128](1.5f32, &mut t)).unwrap();
            launch!(add_kernel[1, 128](a, &t, &mut out)).unwrap();
        }
        // A device-to-device copy, then a kernel.
        _ => {
            let copy = a.clone_on(&current_stream().unwrap()).unwrap();
            launch!(add_kernel[1, 128](&copy, a, &mut out)).unwrap();
        }
    }
    out
}

/// CuPy's `test_capture_run_on_same_stream`: each helper's work, captured on
/// a non-blocking stream made current and replayed on it, gives what running
/// it directly gives. (Memory allocated inside a capture belongs to the
/// graph here: the results are copied into buffers made before the capture.)
#[test]
fn cupy_test_capture_run_on_same_stream() {
    let _turn = turn();
    let s = Stream::new().unwrap();
    let (_, a) = random_input(&current_stream().unwrap());
    current_stream().unwrap().synchronize().unwrap();
    for n in 0..3 {
        let mut out1 = DeviceBuffer::<f32>::zeroed_on(N, &s).unwrap();
        {
            let _scope = s.enter().unwrap();
            let capture = s.begin_capture().unwrap();
            let result = helper(n, &a);
            out1.copy_from_device(&result, &s).unwrap();
            drop(result);
            let graph = capture.end().unwrap();
            graph.instantiate().unwrap().launch(&s).unwrap();
        }
        s.synchronize().unwrap();
        let out2 = helper(n, &a);
        assert_eq!(
            out1.copy_to_host_sync(&s).unwrap(),
            out2.to_host_sync().unwrap(),
            "helper {n}"
        );
    }
}

/// Every kind of use of the legacy default stream is refused while a blocking
/// stream captures, each naming the operation and the capture; none of them
/// harms the capture, whose graph runs right afterwards.
#[test]
fn every_use_of_the_legacy_stream_is_refused_while_a_blocking_stream_captures() {
    let _turn = turn();
    let s = blocking_stream();
    let legacy = Stream::null();
    let x = DeviceBuffer::to_device_sync(&[1.0f32; N], &s).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed_on(N, &s).unwrap();
    let mut other = DeviceBuffer::<f32>::zeroed_on(N, &s).unwrap();
    let event = s.record().unwrap();
    s.synchronize().unwrap();
    let capture = s.begin_capture().unwrap();
    let id = capture.id();
    launch!(saxpy[1, 128, s](2.0, &x, &x, &mut y)).unwrap();
    let cases: Vec<(&str, gpu_runtime::Result<()>)> = vec![
        ("Stream::is_done", legacy.is_done().map(drop)),
        ("Stream::synchronize", legacy.synchronize()),
        // The launch's buffer is ordered after its last use first: that
        // ordering is what the error names.
        (
            "an ordering between streams",
            launch!(fill[1, 128, legacy](5.0f32, &mut other)),
        ),
        (
            "a copy to the device",
            other.copy_from_host_sync(&[2.0; N], &legacy),
        ),
        ("a copy to the host", x.copy_to_host_sync(&legacy).map(drop)),
        ("fill", other.fill(3.0, &legacy)),
        (
            "a device allocation",
            DeviceBuffer::<f32>::zeroed_on(N, &legacy).map(drop),
        ),
        ("Event::record_on", event.record_on(&legacy)),
        ("Stream::wait_event", legacy.wait_event(&event)),
        ("Stream::add_callback", legacy.add_callback(|| {})),
    ];
    for (expected, result) in cases {
        let (capture, operation, _) = refused(result);
        assert_eq!((capture, operation), (id, expected));
    }
    if legacy_mode() {
        // A `_sync` copy without a stream uses the current stream: the
        // legacy default stream in this mode.
        let (capture, _, _) = refused(DeviceBuffer::from_host_sync(&[1.0f32; N]).map(drop));
        assert_eq!(capture, id);
        let (capture, _, _) = refused(other.to_host_sync().map(drop));
        assert_eq!(capture, id);
    } else {
        // The per-thread default stream does not synchronise with other
        // blocking streams: CUDA allows it, and so does the runtime.
        let z = DeviceBuffer::from_host_sync(&[1.0f32; N]).unwrap();
        assert_eq!(z.to_host_sync().unwrap(), vec![1.0; N]);
    }
    let graph = capture.end().unwrap();
    // The legacy stream is usable again.
    assert!(!legacy.is_capturing().unwrap());
    graph.instantiate().unwrap().launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(y.copy_to_host_sync(&s).unwrap(), vec![3.0; N]);
    other.fill(7.0, &legacy).unwrap();
    assert_eq!(other.copy_to_host_sync(&legacy).unwrap(), vec![7.0; N]);
}

/// A blocking stream that joins a non-blocking stream's capture (by waiting
/// for an event recorded in it) blocks the legacy default stream until the
/// capture ends; the capture that began on a non-blocking stream alone does not.
#[test]
fn a_blocking_stream_forked_into_a_capture_blocks_the_legacy_stream() {
    let _turn = turn();
    let origin = Stream::new().unwrap();
    let branch = blocking_stream();
    let x = DeviceBuffer::to_device_sync(&[2.0f32; N], &origin).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed_on(N, &origin).unwrap();
    origin.synchronize().unwrap();
    let capture = origin.begin_capture().unwrap();
    assert!(!Stream::null().is_capturing().unwrap());
    let forked = origin.record().unwrap();
    branch.wait_event(&forked).unwrap();
    assert!(branch.is_capturing().unwrap());
    let (id, operation, _) = refused(Stream::null().is_done());
    assert_eq!((id, operation), (capture.id(), "Stream::is_done"));
    launch!(saxpy[1, 128, branch](1.0, &x, &x, &mut y)).unwrap();
    let joined = branch.record().unwrap();
    origin.wait_event(&joined).unwrap();
    let graph = capture.end().unwrap();
    assert!(Stream::null().is_done().is_ok());
    graph.instantiate().unwrap().launch(&origin).unwrap();
    origin.synchronize().unwrap();
    assert_eq!(y.copy_to_host_sync(&origin).unwrap(), vec![4.0; N]);
}

/// A buffer whose free would go on the legacy default stream, dropped while a
/// blocking stream captures, is freed once the capture ends: the drop
/// neither fails the capture nor loses the memory.
#[test]
fn a_buffer_freed_through_the_legacy_stream_during_a_blocking_capture_waits_for_its_end() {
    let _turn = turn();
    let s = blocking_stream();
    let big = common::size(64 << 20, 1 << 20);
    let x = DeviceBuffer::to_device_sync(&[1.0f32; N], &s).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed_on(N, &s).unwrap();
    let last_on_legacy = DeviceBuffer::<u8>::zeroed_on(big, &Stream::null()).unwrap();
    let ptr = last_on_legacy.as_raw();
    Stream::null().synchronize().unwrap();
    let capture = s.begin_capture().unwrap();
    launch!(saxpy[1, 128, s](1.0, &x, &x, &mut y)).unwrap();
    drop(last_on_legacy);
    let graph = capture.end().unwrap();
    graph.instantiate().unwrap().launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(y.copy_to_host_sync(&s).unwrap(), vec![2.0; N]);
    // The free was queued on the legacy stream when the capture ended: the
    // pool hands the block to the legacy stream's next allocation.
    let again = DeviceBuffer::<u8>::zeroed_on(big, &Stream::null()).unwrap();
    assert_eq!(
        again.as_raw(),
        ptr,
        "the dropped buffer's memory was not freed"
    );
}

/// A device-wide wait from another thread during a capture is refused too,
/// naming the capture (CUDA's global capture mode refuses such calls from
/// every thread; a device-wide wait could never complete while it lasts).
#[test]
fn a_device_wide_wait_from_another_thread_is_refused_during_a_capture() {
    let _turn = turn();
    let s = Stream::new().unwrap();
    let ordinal = s.device();
    let capture = s.begin_capture().unwrap();
    let id = capture.id();
    let (capture_seen, operation) = std::thread::spawn(move || {
        let (capture, operation, _) = refused(Device::get(ordinal).unwrap().synchronize());
        (capture, operation)
    })
    .join()
    .unwrap();
    assert_eq!(capture_seen, id);
    assert!(operation.contains("synchronize"), "{operation}");
    capture.end().unwrap();
}

/// A constant's first set on a device waits for the whole device (the
/// launches before it were not tracked): refused, naming the capture, while
/// another thread's capture runs, and the capture goes on; once it ended,
/// the set goes through. (On two H100s the suite's constant test met a
/// graph test's capture: a bare `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`,
/// and the capture was lost.)
#[test]
fn a_constants_first_set_from_another_thread_is_refused_during_a_capture() {
    use gpu_runtime::SetConstant;
    use gpu_test_kernels::constants::TAPS;
    let _turn = turn();
    let s = Stream::new().unwrap();
    let (_, b) = random_input(&s);
    let mut c = DeviceBuffer::<f32>::zeroed_on(N, &s).unwrap();
    s.synchronize().unwrap();
    let capture = s.begin_capture().unwrap();
    let id = capture.id();
    let (capture_seen, operation) = std::thread::spawn(|| {
        let other = Stream::new().unwrap();
        let (capture, operation, _) = refused(TAPS.set([1.0; 5], &other));
        (capture, operation)
    })
    .join()
    .unwrap();
    assert_eq!(capture_seen, id);
    assert!(operation.starts_with("SetConstant::set"), "{operation}");
    launch!(add_kernel[1, N, s](&b, &b, &mut c)).unwrap();
    let graph = capture.end().unwrap();
    graph.instantiate().unwrap().launch(&s).unwrap();
    TAPS.set([1.0; 5], &s).unwrap();
    let doubled: Vec<f32> = b
        .copy_to_host_sync(&s)
        .unwrap()
        .iter()
        .map(|x| 2.0 * x)
        .collect();
    assert_eq!(c.copy_to_host_sync(&s).unwrap(), doubled);
}

/// Two captures at once on one device, the older on a non-blocking stream
/// and the younger on a blocking one: a device-wide wait names the older (or
/// an older one still, another test's), while a use of the legacy default
/// stream names the younger and its blocking stream (the older does not
/// block it); once the younger ends, the legacy default stream is usable
/// and device-wide waits are still refused.
#[test]
fn two_captures_at_once_each_refusal_names_the_capture_it_is_for() {
    let _turn = turn();
    let quiet = Stream::new().unwrap();
    let blocking = blocking_stream();
    let ordinal = quiet.device();
    let older = quiet.begin_capture().unwrap();
    let younger = blocking.begin_capture().unwrap();
    assert!(older.id() < younger.id());
    let (id, _, _) = refused(Device::get(ordinal).unwrap().synchronize());
    assert!(id <= older.id(), "a device-wide wait named capture {id}");
    match Stream::null().is_done() {
        Err(Error::InCapture {
            capture, stream, ..
        }) => assert_eq!((capture, stream), (younger.id(), blocking.to_string())),
        other => panic!("expected Error::InCapture, got {other:?}"),
    }
    younger.end().unwrap();
    assert!(Stream::null().is_done().is_ok());
    let (id, _, _) = refused(Device::get(ordinal).unwrap().synchronize());
    assert!(id <= older.id(), "a device-wide wait named capture {id}");
    older.end().unwrap();
}

/// A default stream cannot fork into a capture: its wait for an event
/// recorded in the capture is refused naming the capture, it takes no part
/// in it, and the capture ends with no branch to join, its graph running
/// right.
#[test]
fn a_refused_fork_leaves_no_member_behind() {
    let _turn = turn();
    let s = Stream::new().unwrap();
    let x = DeviceBuffer::to_device_sync(&[1.0f32; N], &s).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed_on(N, &s).unwrap();
    s.synchronize().unwrap();
    let capture = s.begin_capture().unwrap();
    let id = capture.id();
    launch!(saxpy[1, 128, s](1.0, &x, &x, &mut y)).unwrap();
    let point = s.record().unwrap();
    let per_thread = Stream::per_thread();
    match per_thread.wait_event(&point) {
        Err(Error::Capture { capture, reason }) => {
            assert_eq!(capture, id);
            assert!(reason.contains("default stream"), "{reason}");
        }
        other => panic!("expected Error::Capture, got {other:?}"),
    }
    assert!(!per_thread.is_capturing().unwrap());
    let graph = capture.end().unwrap();
    graph.instantiate().unwrap().launch(&s).unwrap();
    s.synchronize().unwrap();
    assert_eq!(y.copy_to_host_sync(&s).unwrap(), vec![2.0; N]);
}

/// Runs every case of this module again with the per-thread default stream as
/// the initial current stream (the mode is read once per process: a child
/// process).
#[test]
fn all_cases_in_the_per_thread_default_stream_mode() {
    if !legacy_mode() {
        return; // Already the child.
    }
    let exe = std::env::current_exe().unwrap();
    // This module's cases only (the binary holds other modules' tests).
    let cases = common::test_path(module_path!(), "");
    let out = std::process::Command::new(exe)
        .args([
            &cases,
            "--skip",
            "all_cases_in_the_per_thread_default_stream_mode",
        ])
        .env(PER_THREAD_DEFAULT_STREAM_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("test result: ok"), "{stdout}");
}
