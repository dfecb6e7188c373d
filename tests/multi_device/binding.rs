//! Work queued on a stream runs on that stream's device, whatever the
//! runtime looked at on other devices while queueing it.
//!
//! The CUDA driver acts on the context current on the calling thread. A call
//! that consults another device between binding the stream's device and
//! queueing the work (the pinned buffers' tracking asks device 0's events
//! whether they completed) must not leave the work on the wrong device: on
//! two H200s a copy on device 1's stream failed with `CUDA_ERROR_INVALID_VALUE`,
//! and on the default streams, which CUDA resolves against the current
//! device, the work silently went to device 0's default stream.

use super::{blocks, devices, filled};
use crate::common::{hold, one_at_a_time, size};
use gpu_kernels::fill;
use gpu_runtime::{launch, Communicators, Device, DeviceBuffer, PinnedBuffer, ReduceOp, Stream};

/// Asserts that every element of `values` is `expected`, naming the first
/// that is not (and `what`) rather than printing them all.
fn assert_all(values: &[f32], expected: f32, what: &str) {
    if let Some(i) = values.iter().position(|&v| v != expected) {
        panic!(
            "{what}: element {i} of {} is {}, not {expected}",
            values.len(),
            values[i]
        );
    }
}

/// Device `device`'s legacy and per-thread default streams (the calling
/// thread's), as `Stream::null()` and `Stream::per_thread()` give them
/// with that device current.
fn default_streams(device: Device) -> [Stream; 2] {
    device.scope(|| [Stream::null(), Stream::per_thread()])
}

/// The multi-GPU pipeline example's failure: the same pinned buffers serve
/// device 0's stream, then device 1's, while they still track device 0's
/// copies (events of device 0, which the next copy asks about).
pub fn a_pinned_buffer_serves_one_device_then_another() {
    let devices = devices();
    let (s0, s1) = (
        Stream::on_device(devices[0]).unwrap(),
        Stream::on_device(devices[1]).unwrap(),
    );
    let n = size(1 << 20, 1 << 12);
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let input = PinnedBuffer::from_slice(&data).unwrap();
    let mut output = PinnedBuffer::<f32>::new(2 * n).unwrap();

    let mut on0 = DeviceBuffer::<f32>::zeroed_on(n, &s0).unwrap();
    on0.copy_from_pinned(&input, &s0).unwrap();
    on0.view().copy_to_pinned(&mut output, 0, &s0).unwrap();
    s0.synchronize().unwrap();

    // Pinned to device 1, on device 1's stream.
    let mut on1 = DeviceBuffer::<f32>::zeroed_on(n, &s1).unwrap();
    on1.copy_from_pinned(&input, &s1).unwrap();
    assert!(
        on1.copy_to_host_sync(&s1).unwrap() == data,
        "device 1's copy"
    );
    // Device 1 to another range of the output, on device 1's stream.
    on1.view().copy_to_pinned(&mut output, n, &s1).unwrap();
    let out = output.as_slice().unwrap();
    assert!(out[..n] == data[..], "device 0's half");
    assert!(out[n..] == data[..], "device 1's half");
}

/// The silent case: a pinned copy on device 1's default stream, queued after
/// a held kernel there, runs after that kernel, not at once on device 0's
/// default stream. For the legacy and the per-thread default stream.
pub fn pinned_copies_on_another_devices_default_stream_keep_its_order() {
    let _turn = one_at_a_time();
    let devices = devices();
    let s0 = Stream::on_device(devices[0]).unwrap();
    let n = size(1 << 16, 1 << 12);
    let ones = PinnedBuffer::from_slice(&vec![1.0f32; n]).unwrap();
    let mut on0 = DeviceBuffer::<f32>::zeroed_on(n, &s0).unwrap();
    for default in default_streams(devices[1]) {
        // The pinned buffer tracks a completed copy on device 0 again.
        on0.copy_from_pinned(&ones, &s0).unwrap();
        s0.synchronize().unwrap();
        let mut target = filled(n, 0.0, &default);
        let held = hold(&default, 300);
        launch!(fill[blocks(n), 256, default](7.0f32, &mut target)).unwrap();
        // Queued after the kernel on the same stream: the ones win.
        target.copy_from_pinned(&ones, &default).unwrap();
        assert_all(
            &target.copy_to_host_sync(&default).unwrap(),
            1.0,
            &format!("the copy on {default} of device 1 ran before the kernel queued before it"),
        );
        held.join().unwrap();
    }
}

/// Device 0's and device 1's default streams are different streams: the
/// tracking orders a read on one after a write on the other.
pub fn default_streams_of_two_devices_are_two_streams() {
    let _turn = one_at_a_time();
    let devices = devices();
    let s0 = Stream::on_device(devices[0]).unwrap();
    let n = size(1 << 16, 1 << 12);
    let source = filled(n, 3.0, &s0);
    let [legacy0, per_thread0] = default_streams(devices[0]);
    let [legacy1, per_thread1] = default_streams(devices[1]);
    for (on0, on1) in [(legacy0, legacy1), (per_thread0, per_thread1)] {
        assert_ne!(on0, on1);
        assert_eq!((on0.device(), on1.device()), (0, 1));
        let mut target = filled(n, 0.0, &on1);
        let held = hold(&on0, 300);
        // A peer copy into device 1's buffer on device 0's held stream; the
        // read on device 1's default stream must wait for it.
        target.copy_from_device(&source, &on0).unwrap();
        assert_all(
            &target.copy_to_host_sync(&on1).unwrap(),
            3.0,
            &format!("{on1} of device 1 read before the copy on {on0} of device 0"),
        );
        held.join().unwrap();
    }
}

/// A stream of device 1 waiting for an event of device 0, on device 1's
/// default streams: the work after the wait runs after the event.
pub fn a_default_stream_waits_for_an_event_of_another_device() {
    // Timed: in a process of its own, where no other test's module load
    // (the driver compiling a large PTX module, on a machine whose compile
    // cache is cold) can hold the host meanwhile.
    if !crate::common::faults::in_own_process(&[]) {
        return;
    }
    let _turn = one_at_a_time();
    let devices = devices();
    let s0 = Stream::on_device(devices[0]).unwrap();
    let n = size(1 << 16, 1 << 12);
    for default in default_streams(devices[1]) {
        let mut target = filled(n, 0.0, &default);
        let held = hold(&s0, 300);
        let event = s0.record().unwrap();
        default.wait_event(&event).unwrap();
        // After the wait on device 1: a kernel, then a copy to the host.
        launch!(fill[blocks(n), 256, default](2.0f32, &mut target)).unwrap();
        let start = std::time::Instant::now();
        assert_all(
            &target.copy_to_host_sync(&default).unwrap(),
            2.0,
            "after the wait",
        );
        assert!(
            start.elapsed() >= std::time::Duration::from_millis(200),
            "{default} (device 1) did not wait for device 0's event"
        );
        held.join().unwrap();
    }
}

/// Collectives on every device's default stream: each rank's part runs on
/// its own device's default stream (on one stream they would wait for each
/// other for ever).
pub fn collectives_run_on_each_devices_default_stream() {
    let _turn = one_at_a_time(); // see `run_rank_processes`
    let devices = devices();
    let ranks = devices.len();
    let mut comms = Communicators::new(&devices).unwrap();
    let n = size(1 << 16, 1000);
    for which in 0..2 {
        let streams: Vec<Stream> = devices
            .iter()
            .map(|&d| default_streams(d)[which].clone())
            .collect();
        let mut buffers: Vec<DeviceBuffer<f32>> = streams
            .iter()
            .map(|s| DeviceBuffer::to_device_sync(&vec![1.0f32; n], s).unwrap())
            .collect();
        comms
            .all_reduce_in_place(buffers.iter_mut(), ReduceOp::Sum, &streams)
            .unwrap();
        for (r, buffer) in buffers.iter().enumerate() {
            assert_all(
                &buffer.copy_to_host_sync(&streams[r]).unwrap(),
                ranks as f32,
                &format!("rank {r} on {}", streams[r]),
            );
        }
    }
}
