//! CUDA graphs: capture (closure and begin/end forms), replay, kernel
//! argument updates through the typed launcher, buffers kept alive and
//! tracked across replays, streams forked and joined inside a capture, graph
//! allocations, and the operations a capture refuses, each with an error
//! naming the capture.

mod dot;

use crate::common;

use common::{blocks, filled, hold, one_at_a_time, size};
use gpu_kernels::{add_kernel, busy, fill, saxpy};
use gpu_runtime::{
    kernel_args, launch, Device, DeviceBuffer, Error, Event, GraphNodeKind, PinnedBuffer, Stream,
};

#[test]
fn a_graph_of_100_kernels_replays_them_all() {
    let s = Stream::new().unwrap();
    let n = 1000;
    let ones = filled(n, 1.0, &s);
    let mut p = filled(n, 0.0, &s);
    let mut q = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| {
            for k in 0..100 {
                if k % 2 == 0 {
                    launch!(add_kernel[blocks(n), 256, s](&p, &ones, &mut q))?;
                } else {
                    launch!(add_kernel[blocks(n), 256, s](&q, &ones, &mut p))?;
                }
            }
            Ok(())
        })
        .unwrap();
    // Captured, not run.
    assert_eq!(p.copy_to_host_sync(&s).unwrap(), vec![0.0; n]);
    assert_eq!(graph.kernel_nodes().len(), 100);
    assert!(graph
        .kernel_nodes()
        .iter()
        .all(|k| k.kernel_name() == "add_kernel"));
    let kinds = graph.node_kinds().unwrap();
    assert_eq!(
        kinds
            .iter()
            .filter(|k| **k == GraphNodeKind::Kernel)
            .count(),
        100,
        "{kinds:?}"
    );
    let exec = graph.instantiate().unwrap();
    for _ in 0..10 {
        exec.launch(&s).unwrap();
    }
    assert_eq!(p.copy_to_host_sync(&s).unwrap(), vec![1000.0; n]);
    assert_eq!(q.copy_to_host_sync(&s).unwrap(), vec![999.0; n]);
}

#[test]
fn begin_and_end_capture_what_is_queued_between() {
    let s = Stream::new().unwrap();
    let n = 512;
    let x = filled(n, 3.0, &s);
    let mut y = filled(n, 0.0, &s);
    let capture = s.begin_capture().unwrap();
    assert!(capture.id() > 0);
    launch!(saxpy[blocks(n), 256, s](2.0f32, &x, &x, &mut y)).unwrap();
    let graph = capture.end().unwrap();
    assert_eq!(y.copy_to_host_sync(&s).unwrap(), vec![0.0; n]);
    graph.instantiate().unwrap().launch(&s).unwrap();
    assert_eq!(y.copy_to_host_sync(&s).unwrap(), vec![9.0; n]);
}

#[test]
fn each_replay_reads_the_buffers_as_they_are_then() {
    let s = Stream::new().unwrap();
    let other = Stream::new().unwrap();
    let n = 2048;
    let mut x = filled(n, 0.0, &s);
    let ones = filled(n, 1.0, &s);
    let mut y = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| launch!(add_kernel[blocks(n), 256, s](&x, &ones, &mut y)))
        .unwrap();
    let exec = graph.instantiate().unwrap();
    for i in 0..20 {
        // Written on another stream between replays: the replay waits for it.
        x.copy_from_host_sync(&vec![i as f32; n], &other).unwrap();
        exec.launch(&s).unwrap();
        assert_eq!(
            y.copy_to_host_sync(&other).unwrap(),
            vec![i as f32 + 1.0; n],
            "replay {i}"
        );
    }
}

#[test]
fn a_replay_is_ordered_before_later_uses_on_other_streams() {
    let _turn = one_at_a_time();
    let (s, reader) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 16, 1 << 12);
    // Last written on `reader`: without the launch's tracking, a copy on
    // `reader` would not wait for the graph on `s`.
    let mut y = filled(n, 0.0, &reader);
    let graph = s
        .capture(|s| launch!(fill[blocks(n), 256, s](42.0f32, &mut y)))
        .unwrap();
    let exec = graph.instantiate().unwrap();
    let held = hold(&s, 300);
    exec.launch(&s).unwrap();
    assert_eq!(y.copy_to_host_sync(&reader).unwrap(), vec![42.0; n]);
    held.join().unwrap();
}

#[test]
fn a_replay_waits_for_the_writers_of_what_it_reads() {
    let _turn = one_at_a_time();
    let (s, writer) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = size(1 << 16, 1 << 12);
    let mut x = filled(n, 0.0, &s);
    let ones = filled(n, 1.0, &s);
    let mut y = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| launch!(add_kernel[blocks(n), 256, s](&x, &ones, &mut y)))
        .unwrap();
    let exec = graph.instantiate().unwrap();
    // x is written on another stream, held: the replay must wait for it.
    let held = hold(&writer, 300);
    launch!(fill[blocks(n), 256, writer](5.0f32, &mut x)).unwrap();
    exec.launch(&s).unwrap();
    assert_eq!(y.copy_to_host_sync(&s).unwrap(), vec![6.0; n]);
    held.join().unwrap();
}

/// The expected result of `busy` with `rounds` rounds on `v`.
fn busy_value(mut v: f32, rounds: u32) -> f32 {
    for _ in 0..rounds {
        v = v.mul_add(0.999, 0.001);
    }
    v
}

#[test]
fn a_cross_stream_hand_off_in_a_graph_is_right_at_every_replay() {
    let (s, forked, other) = (
        Stream::new().unwrap(),
        Stream::new().unwrap(),
        Stream::new().unwrap(),
    );
    let n = size(1 << 20, 1 << 12);
    let rounds = size(2000, 20) as u32;
    let mut x = filled(n, 0.0, &s);
    let ones = filled(n, 1.0, &s);
    let mut y = filled(n, 0.0, &s);
    let mut z = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| {
            // y = busy(x) on the capturing stream, slow on a GPU ...
            launch!(busy[blocks(n), 256, s](&x, rounds, &mut y))?;
            // ... forked to another stream, which reads y: the tracking makes
            // the read wait for the write, an edge of the graph.
            forked.wait_event(&s.record()?)?;
            launch!(add_kernel[blocks(n), 256, forked](&y, &ones, &mut z))?;
            // Not joined by hand: the end of the capture joins it.
            Ok(())
        })
        .unwrap();
    assert_eq!(graph.kernel_nodes().len(), 2);
    let exec = graph.instantiate().unwrap();
    for i in 0..size(50, 10) {
        let v = (i % 7) as f32 / 7.0;
        x.copy_from_host_sync(&vec![v; n], &other).unwrap();
        exec.launch(&s).unwrap();
        let expected = busy_value(v, rounds) + 1.0;
        let seen = z.copy_to_host_sync(&other).unwrap();
        assert!(
            seen.iter()
                .all(|&z| (z - expected).abs() <= 1e-5 * expected.abs()),
            "replay {i}: {} instead of {expected}",
            seen[0]
        );
    }
    // The forked stream left the capture: it runs work again.
    launch!(fill[blocks(n), 256, forked](5.0f32, &mut z)).unwrap();
    assert_eq!(z.copy_to_host_sync(&forked).unwrap(), vec![5.0; n]);
}

#[test]
fn events_fork_and_join_streams_by_hand() {
    let (s, a, b) = (
        Stream::new().unwrap(),
        Stream::new().unwrap(),
        Stream::new().unwrap(),
    );
    let n = 1024;
    let mut u = filled(n, 0.0, &s);
    let mut v = filled(n, 0.0, &s);
    let mut w = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| {
            let start = s.record()?;
            a.wait_event(&start)?;
            b.wait_event(&start)?;
            launch!(fill[blocks(n), 256, a](1.0f32, &mut u))?;
            launch!(fill[blocks(n), 256, b](2.0f32, &mut v))?;
            s.wait_event(&a.record()?)?;
            s.wait_event(&b.record()?)?;
            launch!(add_kernel[blocks(n), 256, s](&u, &v, &mut w))
        })
        .unwrap();
    graph.instantiate().unwrap().launch(&s).unwrap();
    assert_eq!(w.copy_to_host_sync(&s).unwrap(), vec![3.0; n]);
}

#[test]
fn buffers_dropped_after_the_capture_live_as_long_as_the_graph() {
    let s = Stream::new().unwrap();
    let n = 4096;
    let x = filled(n, 2.0, &s);
    let ones = filled(n, 1.0, &s);
    let mut y = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| launch!(add_kernel[blocks(n), 256, s](&x, &ones, &mut y)))
        .unwrap();
    drop(x);
    drop(ones);
    // The frees would have run by now; other buffers cannot take the memory
    // the graph reads.
    s.synchronize().unwrap();
    let _others: Vec<_> = (0..8).map(|_| filled(n, -7.0, &s)).collect();
    let exec = graph.instantiate().unwrap();
    drop(graph);
    exec.launch(&s).unwrap();
    exec.launch(&s).unwrap();
    assert_eq!(y.copy_to_host_sync(&s).unwrap(), vec![3.0; n]);
}

#[test]
fn memory_allocated_and_freed_inside_a_capture_is_the_graphs() {
    let s = Stream::new().unwrap();
    let n = 4096;
    let x = filled(n, 5.0, &s);
    let ones = filled(n, 1.0, &s);
    let mut y = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| {
            let mut temp = DeviceBuffer::<f32>::zeroed_on(n, s)?;
            launch!(add_kernel[blocks(n), 256, s](&x, &ones, &mut temp))?;
            launch!(add_kernel[blocks(n), 256, s](&temp, &ones, &mut y))?;
            Ok(()) // temp dropped here: freed inside the graph
        })
        .unwrap();
    let kinds = graph.node_kinds().unwrap();
    assert!(kinds.contains(&GraphNodeKind::MemAlloc), "{kinds:?}");
    assert!(kinds.contains(&GraphNodeKind::MemFree), "{kinds:?}");
    let exec = graph.instantiate().unwrap();
    for _ in 0..5 {
        exec.launch(&s).unwrap();
    }
    assert_eq!(y.copy_to_host_sync(&s).unwrap(), vec![7.0; n]);
}

#[test]
fn a_buffer_allocated_in_a_capture_cannot_outlive_it() {
    let s = Stream::new().unwrap();
    let capture = s.begin_capture().unwrap();
    let id = capture.id();
    let mut kept = DeviceBuffer::<f32>::zeroed_on(256, &s).unwrap();
    launch!(fill[1, 256, s](1.0f32, &mut kept)).unwrap();
    let err = capture.end().unwrap_err();
    assert_eq!(
        err,
        Error::CaptureEscaped {
            capture: id,
            buffers: 1
        }
    );
    assert!(err
        .to_string()
        .contains("drop such buffers inside the capture"));
    // Its memory was the discarded graph's: every use is refused.
    let err = kept.copy_to_host_sync(&s).unwrap_err();
    assert_eq!(err, Error::BufferOfCapture { capture: id });
    assert!(launch!(fill[1, 256, s](2.0f32, &mut kept)).is_err());
    drop(kept);
    // The stream works as before.
    let x = filled(256, 4.0, &s);
    assert_eq!(x.copy_to_host_sync(&s).unwrap(), vec![4.0; 256]);
}

#[test]
fn a_buffer_of_a_capture_is_refused_on_other_streams_during_it() {
    let (s, outside) = (Stream::new().unwrap(), Stream::new().unwrap());
    let graph = s.capture(|s| {
        let mut inside = DeviceBuffer::<f32>::zeroed_on(256, s)?;
        let err = launch!(fill[1, 256, outside](1.0f32, &mut inside)).unwrap_err();
        assert!(matches!(err, Error::BufferOfCapture { .. }), "{err:?}");
        Ok(())
    });
    graph.unwrap();
}

#[test]
fn kernel_arguments_are_updated_through_the_typed_launcher() {
    let s = Stream::new().unwrap();
    let n = 1024;
    let x = filled(n, 1.0, &s);
    let y = filled(n, 10.0, &s);
    let mut out = filled(n, 0.0, &s);
    let mut other_out = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| launch!(saxpy[blocks(n), 256, s](2.0f32, &x, &y, &mut out)))
        .unwrap();
    let node = graph.kernel_nodes()[0].clone();
    assert_eq!(node.kernel_name(), "saxpy");
    let mut exec = graph.instantiate().unwrap();
    exec.launch(&s).unwrap();
    // New scalar and new output buffer, for the launches from now on.
    let args = kernel_args!(saxpy[blocks(n), 256, s](3.0f32, &x, &y, &mut other_out)).unwrap();
    assert_eq!(args.kernel_name(), "saxpy");
    exec.set_kernel_args(&node, args).unwrap();
    exec.launch(&s).unwrap();
    assert_eq!(out.copy_to_host_sync(&s).unwrap(), vec![12.0; n]);
    assert_eq!(other_out.copy_to_host_sync(&s).unwrap(), vec![13.0; n]);

    // A smaller grid and a different input: only the first half changes.
    let args = kernel_args!(saxpy[blocks(n / 2), 256, s](1.0f32, &y, &y, &mut out)).unwrap();
    exec.set_kernel_args(&node, args).unwrap();
    exec.launch(&s).unwrap();
    let seen = out.copy_to_host_sync(&s).unwrap();
    assert!(seen[..n / 2].iter().all(|&v| v == 20.0));
    assert!(seen[n / 2..].iter().all(|&v| v == 12.0));

    // Another kernel's arguments are refused, naming both kernels.
    let wrong = kernel_args!(add_kernel[blocks(n), 256, s](&x, &y, &mut out)).unwrap();
    let err = exec.set_kernel_args(&node, wrong).unwrap_err();
    assert_eq!(
        err,
        Error::GraphKernelMismatch {
            node: "saxpy",
            given: "add_kernel"
        }
    );
    // And a node of another graph.
    let graph2 = s
        .capture(|s| launch!(saxpy[blocks(n), 256, s](2.0f32, &x, &y, &mut out)))
        .unwrap();
    let foreign = graph2.kernel_nodes()[0].clone();
    let args = kernel_args!(saxpy[blocks(n), 256, s](3.0f32, &x, &y, &mut out)).unwrap();
    assert!(matches!(
        exec.set_kernel_args(&foreign, args),
        Err(Error::Capture { .. })
    ));
    // A bad launch shape is refused when the arguments are made, as for a launch.
    let err = kernel_args!(saxpy[0, 256, s](3.0f32, &x, &y, &mut out)).unwrap_err();
    assert!(matches!(err, Error::InvalidLaunch { .. }), "{err:?}");
}

#[test]
fn buffers_given_by_an_update_are_kept_alive_by_the_instance() {
    let s = Stream::new().unwrap();
    let n = 1024;
    let x = filled(n, 1.0, &s);
    let mut out = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| launch!(saxpy[blocks(n), 256, s](1.0f32, &x, &x, &mut out)))
        .unwrap();
    let node = graph.kernel_nodes()[0].clone();
    let mut exec = graph.instantiate().unwrap();
    let fresh = filled(n, 4.0, &s);
    exec.set_kernel_args(
        &node,
        kernel_args!(saxpy[blocks(n), 256, s](1.0f32, &fresh, &fresh, &mut out)).unwrap(),
    )
    .unwrap();
    drop(fresh);
    s.synchronize().unwrap();
    let _others: Vec<_> = (0..8).map(|_| filled(n, -1.0, &s)).collect();
    exec.launch(&s).unwrap();
    assert_eq!(out.copy_to_host_sync(&s).unwrap(), vec![8.0; n]);
}

#[test]
fn one_instance_launched_on_two_streams_runs_in_launch_order() {
    let _turn = one_at_a_time();
    let (s1, s2) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = 1024;
    let ones = filled(n, 1.0, &s1);
    let mut p = filled(n, 0.0, &s1);
    let mut q = filled(n, 0.0, &s1);
    let graph = s1
        .capture(|s| {
            launch!(add_kernel[blocks(n), 256, s](&p, &ones, &mut q))?;
            launch!(add_kernel[blocks(n), 256, s](&q, &ones, &mut p))
        })
        .unwrap();
    let exec = graph.instantiate().unwrap();
    let held = hold(&s1, 200);
    for i in 0..10 {
        exec.launch(if i % 2 == 0 { &s1 } else { &s2 }).unwrap();
    }
    assert_eq!(p.copy_to_host_sync(&s2).unwrap(), vec![20.0; n]);
    held.join().unwrap();
}

#[test]
fn synchronous_calls_inside_a_capture_are_errors_naming_it() {
    let s = Stream::new().unwrap();
    let outside = Stream::new().unwrap();
    let n = 256;
    let mut x = filled(n, 1.0, &s);
    let pinned = PinnedBuffer::<f32>::new(n).unwrap();
    let outside_event = outside.record().unwrap();
    let capture = s.begin_capture().unwrap();
    let id = capture.id();
    let in_capture = |e: Error, operation: &str| match &e {
        Error::InCapture {
            operation: op,
            capture,
            ..
        } => {
            assert_eq!(*op, operation);
            assert_eq!(*capture, id);
            let message = e.to_string();
            assert!(
                message.contains(&format!("graph capture {id}")),
                "{message}"
            );
        }
        other => panic!("expected InCapture for {operation}, got {other:?}"),
    };
    launch!(fill[1, 256, s](2.0f32, &mut x)).unwrap();
    in_capture(s.synchronize().unwrap_err(), "synchronize");
    in_capture(s.is_done().unwrap_err(), "is_done");
    in_capture(x.copy_to_host_sync(&s).unwrap_err(), "copy_to_host_sync");
    in_capture(
        x.copy_from_host_sync(&[0.0; 256], &s).unwrap_err(),
        "copy_from_host_sync",
    );
    in_capture(
        DeviceBuffer::to_device_sync(&[0.0f32; 4], &s).unwrap_err(),
        "copy_from_host_sync",
    );
    in_capture(
        x.copy_from_host(&[0.0; 256], &s).unwrap_err(),
        "copy_from_host",
    );
    in_capture(
        DeviceBuffer::to_device(&[0.0f32; 4], &s).unwrap_err(),
        "copy_from_host",
    );
    in_capture(x.fill(3.0, &s).unwrap_err(), "fill");
    in_capture(s.add_callback(|| ()).unwrap_err(), "add_callback");
    in_capture(s.async_done().unwrap_err(), "async_done");
    // A device-wide call is refused while any capture is under way on the
    // device: the error names the oldest of them (another test of this
    // binary may be capturing at the same time).
    let in_a_capture = |e: Error, operation: &str| match &e {
        Error::InCapture {
            operation: op,
            capture,
            ..
        } => {
            assert_eq!(*op, operation);
            assert!(*capture <= id, "capture {capture} began after {id}");
            assert!(
                e.to_string().contains(&format!("graph capture {capture}")),
                "{e}"
            );
        }
        other => panic!("expected InCapture for {operation}, got {other:?}"),
    };
    in_a_capture(
        Device::current().unwrap().synchronize().unwrap_err(),
        "Device::synchronize",
    );
    in_a_capture(
        gpu_runtime::synchronize().unwrap_err(),
        "Device::synchronize",
    );
    in_capture(
        x.copy_from_pinned(&pinned, &s).unwrap_err(),
        "a copy between pinned and device memory",
    );
    let captured = s.record().unwrap();
    in_capture(captured.synchronize().unwrap_err(), "Event::synchronize");
    in_capture(captured.is_done().unwrap_err(), "Event::is_done");
    in_capture(
        Event::elapsed_ms(&captured, &captured).unwrap_err(),
        "Event::elapsed_ms",
    );
    in_capture(s.wait_event(&outside_event).unwrap_err(), "wait_event");
    // Work on other streams runs as usual meanwhile.
    let y = filled(n, 6.0, &outside);
    assert_eq!(y.copy_to_host_sync(&outside).unwrap(), vec![6.0; n]);
    // Nothing refused reached the driver: the capture ends and runs.
    let graph = capture.end().unwrap();
    assert_eq!(x.copy_to_host_sync(&s).unwrap(), vec![1.0; n]);
    graph.instantiate().unwrap().launch(&s).unwrap();
    assert_eq!(x.copy_to_host_sync(&s).unwrap(), vec![2.0; n]);
    // The event recorded in the capture marks no real work afterwards either.
    assert!(matches!(
        captured.synchronize(),
        Err(Error::InCapture { .. })
    ));
    s.synchronize().unwrap();
}

#[test]
fn captures_that_cannot_begin_or_join_are_errors() {
    let err = Stream::null().begin_capture().unwrap_err();
    assert!(err.to_string().contains("default stream"), "{err}");
    let s = Stream::new().unwrap();
    let capture = s.begin_capture().unwrap();
    assert!(matches!(s.begin_capture(), Err(Error::Capture { .. })));
    // A default stream cannot be forked into a capture.
    let e = s.record().unwrap();
    assert!(matches!(
        Stream::null().wait_event(&e),
        Err(Error::Capture { .. })
    ));
    // Two captures cannot merge.
    let t = Stream::new().unwrap();
    let other = t.begin_capture().unwrap();
    assert!(matches!(t.wait_event(&e), Err(Error::Capture { .. })));
    drop(other);
    // An abandoned capture (the guard dropped) ends: the stream works again.
    drop(capture);
    s.synchronize().unwrap();
    let x = filled(64, 1.0, &s);
    assert_eq!(x.copy_to_host_sync(&s).unwrap(), vec![1.0; 64]);
}

#[test]
fn an_error_inside_the_closure_ends_the_capture_and_is_returned() {
    let s = Stream::new().unwrap();
    let mut x = filled(64, 1.0, &s);
    let err = s
        .capture(|s| {
            launch!(fill[1, 64, s](2.0f32, &mut x))?;
            s.synchronize()
        })
        .unwrap_err();
    assert!(matches!(err, Error::InCapture { .. }), "{err:?}");
    // Nothing ran, and the stream is no longer capturing.
    assert_eq!(x.copy_to_host_sync(&s).unwrap(), vec![1.0; 64]);
}

#[test]
fn a_graph_cannot_be_launched_inside_a_capture() {
    let s = Stream::new().unwrap();
    let mut x = filled(64, 1.0, &s);
    let exec = s
        .capture(|s| launch!(fill[1, 64, s](2.0f32, &mut x)))
        .unwrap()
        .instantiate()
        .unwrap();
    let t = Stream::new().unwrap();
    let err = t.capture(|t| exec.launch(t)).unwrap_err();
    assert!(matches!(err, Error::InCapture { .. }), "{err:?}");
}

#[test]
fn a_dropped_buffer_whose_last_stream_captures_is_freed_after_the_capture() {
    let s = Stream::new().unwrap();
    let unused = filled(1 << 12, 1.0, &s);
    let mut x = filled(64, 0.0, &s);
    let graph = s
        .capture(|s| {
            drop(unused); // not used by the graph: freed once the capture ends
            launch!(fill[1, 64, s](9.0f32, &mut x))
        })
        .unwrap();
    graph.instantiate().unwrap().launch(&s).unwrap();
    assert_eq!(x.copy_to_host_sync(&s).unwrap(), vec![9.0; 64]);
}

#[test]
fn an_update_cannot_race_a_branch_the_graph_does_not_order() {
    let (s, side) = (Stream::new().unwrap(), Stream::new().unwrap());
    let n = 1024;
    let x = filled(n, 1.0, &s);
    let mut a = filled(n, 0.0, &s);
    let mut b = filled(n, 0.0, &s);
    let mut fresh = filled(n, 0.0, &s);
    // Two branches: `a` on s, `b` on side, not ordered with each other.
    let graph = s
        .capture(|s| {
            side.wait_event(&s.record()?)?;
            launch!(saxpy[blocks(n), 256, s](2.0f32, &x, &x, &mut a))?;
            launch!(saxpy[blocks(n), 256, side](3.0f32, &x, &x, &mut b))
        })
        .unwrap();
    let [on_s, on_side] = [
        graph.kernel_nodes()[0].clone(),
        graph.kernel_nodes()[1].clone(),
    ];
    let mut exec = graph.instantiate().unwrap();
    // The side branch writing `a`, which the other branch writes: refused.
    let err = exec
        .set_kernel_args(
            &on_side,
            kernel_args!(saxpy[blocks(n), 256, s](3.0f32, &x, &x, &mut a)).unwrap(),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("does not order with this node"),
        "{err}"
    );
    // Reading `b`, which the other branch writes: refused too.
    let err = exec
        .set_kernel_args(
            &on_s,
            kernel_args!(saxpy[blocks(n), 256, s](2.0f32, &b, &x, &mut a)).unwrap(),
        )
        .unwrap_err();
    assert!(matches!(err, Error::Capture { .. }), "{err:?}");
    // Its own buffers with a new scalar, or a buffer nothing else uses: fine.
    exec.set_kernel_args(
        &on_side,
        kernel_args!(saxpy[blocks(n), 256, s](5.0f32, &x, &x, &mut b)).unwrap(),
    )
    .unwrap();
    exec.set_kernel_args(
        &on_s,
        kernel_args!(saxpy[blocks(n), 256, s](4.0f32, &x, &x, &mut fresh)).unwrap(),
    )
    .unwrap();
    // Once `fresh` is written by one branch, the other cannot take it.
    assert!(exec
        .set_kernel_args(
            &on_side,
            kernel_args!(saxpy[blocks(n), 256, s](5.0f32, &fresh, &x, &mut b)).unwrap(),
        )
        .is_err());
    exec.launch(&s).unwrap();
    assert_eq!(b.copy_to_host_sync(&s).unwrap(), vec![6.0; n]);
    assert_eq!(fresh.copy_to_host_sync(&s).unwrap(), vec![5.0; n]);
}

#[test]
fn a_graph_captured_from_one_stream_takes_any_buffers() {
    let s = Stream::new().unwrap();
    let n = 1024;
    let x = filled(n, 1.0, &s);
    let mut a = filled(n, 0.0, &s);
    let mut b = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| {
            launch!(saxpy[blocks(n), 256, s](2.0f32, &x, &x, &mut a))?;
            launch!(saxpy[blocks(n), 256, s](3.0f32, &x, &x, &mut b))
        })
        .unwrap();
    let second = graph.kernel_nodes()[1].clone();
    let mut exec = graph.instantiate().unwrap();
    // The second node reads what the first writes: ordered, one stream.
    exec.set_kernel_args(
        &second,
        kernel_args!(saxpy[blocks(n), 256, s](3.0f32, &a, &x, &mut b)).unwrap(),
    )
    .unwrap();
    exec.launch(&s).unwrap();
    assert_eq!(b.copy_to_host_sync(&s).unwrap(), vec![10.0; n]);
}

#[test]
fn arguments_naming_a_graph_allocation_are_refused() {
    let s = Stream::new().unwrap();
    let n = 256;
    let x = filled(n, 1.0, &s);
    let mut out = filled(n, 0.0, &s);
    let graph = s
        .capture(|s| launch!(saxpy[1, 256, s](1.0f32, &x, &x, &mut out)))
        .unwrap();
    let node = graph.kernel_nodes()[0].clone();
    let mut exec = graph.instantiate().unwrap();
    let mut smuggled = None;
    let err = s
        .capture(|s| {
            let mut inside = DeviceBuffer::<f32>::zeroed_on(n, s)?;
            smuggled = Some(kernel_args!(saxpy[1, 256, s](1.0f32, &x, &x, &mut inside))?);
            Ok(())
        })
        .unwrap_err();
    assert!(matches!(err, Error::CaptureEscaped { .. }), "{err:?}");
    let err = exec.set_kernel_args(&node, smuggled.unwrap()).unwrap_err();
    assert!(matches!(err, Error::BufferOfCapture { .. }), "{err:?}");
}
