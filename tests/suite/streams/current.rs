//! The current stream: per host thread and device, scoped and unscoped, and
//! the work issued without a stream going to it.

use crate::common;

use gpu_kernels::fill;
use gpu_ops as ops;
use gpu_runtime::{
    current_stream, launch, DeviceBuffer, Event, Stream, PER_THREAD_DEFAULT_STREAM_ENV,
};
use std::sync::{Arc, Barrier};

fn initial_default() -> Stream {
    if std::env::var(PER_THREAD_DEFAULT_STREAM_ENV).is_ok_and(|v| v == "1") {
        Stream::per_thread()
    } else {
        Stream::null()
    }
}

#[test]
fn scopes_restore_exactly_the_previous_stream() {
    std::thread::spawn(|| {
        let (a, b, c) = (
            Stream::new().unwrap(),
            Stream::new().unwrap(),
            Stream::new().unwrap(),
        );
        assert_eq!(current_stream().unwrap(), initial_default());
        {
            let _with_a = a.enter().unwrap();
            assert_eq!(current_stream().unwrap(), a);
            {
                let _with_b = b.enter().unwrap();
                assert_eq!(current_stream().unwrap(), b);
                let inner = c.scope(|| current_stream().unwrap()).unwrap();
                assert_eq!(inner, c);
                assert_eq!(current_stream().unwrap(), b);
            }
            assert_eq!(current_stream().unwrap(), a);
        }
        assert_eq!(current_stream().unwrap(), initial_default());

        // A stream set by make_current (CuPy's use()) is restored after a scope;
        // CuPy restores the default there instead.
        a.make_current().unwrap();
        b.scope(|| assert_eq!(current_stream().unwrap(), b))
            .unwrap();
        assert_eq!(current_stream().unwrap(), a);

        // make_current inside a scope lasts until the scope ends.
        {
            let _with_b = b.enter().unwrap();
            c.make_current().unwrap();
            assert_eq!(current_stream().unwrap(), c);
        }
        assert_eq!(current_stream().unwrap(), a);
        Stream::null().make_current().unwrap();
        assert_eq!(current_stream().unwrap(), Stream::null());
    })
    .join()
    .unwrap();
}

#[test]
fn work_without_a_stream_goes_to_the_current_stream() {
    std::thread::spawn(|| {
        let s = Stream::new().unwrap();
        let n = common::size(1 << 24, 1 << 16);
        let _with_s = s.enter().unwrap();
        // A launch, then a copy and a reduction, all without naming a stream:
        // on a non-blocking stream they would race with work on another stream.
        let mut x = DeviceBuffer::<f32>::zeroed_on(n, &s).unwrap();
        for k in 0..20 {
            launch!(fill[n / 256, 256](k as f32, &mut x)).unwrap();
        }
        assert_eq!(s.last_kernel(), Some("fill"));
        let host = x.to_host_sync().unwrap();
        assert!(
            host.iter().all(|&v| v == 19.0),
            "the copy ran after the launches, on the same stream"
        );
        let total = ops::sum(&x).unwrap();
        assert_eq!(s.last_kernel(), Some("sum_partials"));
        assert_eq!(total.to_host_sync().unwrap(), 19.0 * n as f32);
        // An event recorded without a stream marks the current stream.
        for k in 0..20 {
            launch!(fill[n / 256, 256](100.0 + k as f32, &mut x)).unwrap();
        }
        let marker = Event::new().unwrap();
        marker.record().unwrap();
        let other = Stream::new().unwrap();
        other.wait_event(&marker).unwrap();
        let mut y = DeviceBuffer::<f32>::zeroed_on(n, &other).unwrap();
        launch!(gpu_kernels::add_kernel[n / 256, 256, other](&x, &x, &mut y)).unwrap();
        assert!(y
            .copy_to_host_sync(&other)
            .unwrap()
            .iter()
            .all(|&v| v == 238.0));
    })
    .join()
    .unwrap();
}

#[test]
fn sixteen_threads_each_have_their_own_current_stream() {
    let threads = 16;
    let barrier = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let own = Stream::new().unwrap();
                assert_eq!(current_stream().unwrap(), initial_default());
                let _with_own = own.enter().unwrap();
                barrier.wait(); // every thread is inside its scope now
                let mut out = DeviceBuffer::<u32>::zeroed_on(4096, &own).unwrap();
                for _ in 0..50 {
                    assert_eq!(current_stream().unwrap(), own, "thread {t}");
                    launch!(fill[16, 256](t as u32, &mut out)).unwrap();
                }
                assert_eq!(own.last_kernel(), Some("fill"));
                let values = out.to_host_sync().unwrap();
                barrier.wait();
                drop(_with_own);
                assert_eq!(current_stream().unwrap(), initial_default());
                values.iter().all(|&v| v == t as u32)
            })
        })
        .collect();
    for (t, h) in handles.into_iter().enumerate() {
        assert!(h.join().unwrap(), "thread {t} saw another thread's work");
    }
}

#[test]
fn per_thread_default_stream_from_the_environment() {
    // The setting is read once per process: check it in a child process.
    let exe = std::env::current_exe().unwrap();
    for (value, expected) in [
        ("1", "<Stream 2 (device -1)>"),
        ("0", "<Stream 0 (device -1)>"),
    ] {
        let child = common::test_path(module_path!(), "child_reports_its_default_stream");
        let out = std::process::Command::new(&exe)
            .args(["--exact", &child, "--include-ignored", "--nocapture"])
            .env(PER_THREAD_DEFAULT_STREAM_ENV, value)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!("default stream: {expected}")),
            "{value}: {stdout}"
        );
    }
}

/// Run by `per_thread_default_stream_from_the_environment` with the variable
/// set; run alone it checks the default for the environment it finds.
#[test]
fn child_reports_its_default_stream() {
    let current = current_stream().unwrap();
    assert_eq!(current, initial_default());
    assert_eq!(Stream::thread_default(), initial_default());
    let mut out = DeviceBuffer::<u32>::device_array(256).unwrap();
    launch!(fill[1, 256](3u32, &mut out)).unwrap();
    assert!(out.to_host_sync().unwrap().iter().all(|&v| v == 3));
    println!("default stream: {current}");
}
