//! Behaviour that needs two devices, on the CPU simulator with two simulated
//! devices (`GPU_SIM_DEVICES=2`), forced for this binary so that it runs the
//! same on every machine: device scopes, and the device checks of events and
//! graphs.

use gpu_runtime::{Device, DeviceBuffer, Error, Event, Stream, BACKEND_ENV, SIMULATED_DEVICES_ENV};
use std::sync::Once;

/// Forces the simulator with two devices before the runtime's first use.
fn two_simulated_devices() {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        std::env::set_var(BACKEND_ENV, "simulator");
        std::env::set_var(SIMULATED_DEVICES_ENV, "2");
    });
    assert_eq!(Device::count().unwrap(), 2);
}

#[test]
fn device_scope_restores_the_device_after_a_panic() {
    two_simulated_devices();
    std::thread::spawn(|| {
        let one = Device::get(1).unwrap();
        let outcome = std::panic::catch_unwind(|| one.scope(|| panic!("inside the scope")));
        assert!(outcome.is_err());
        assert_eq!(
            Device::current().unwrap().ordinal(),
            0,
            "device 0 is current again"
        );
        let guard = one.enter();
        assert_eq!(Device::current().unwrap().ordinal(), 1);
        drop(guard);
        assert_eq!(Device::current().unwrap().ordinal(), 0);
    })
    .join()
    .unwrap();
}

#[test]
fn device_guards_dropped_out_of_order_restore_the_first_device() {
    two_simulated_devices();
    std::thread::spawn(|| {
        let (zero, one) = (Device::get(0).unwrap(), Device::get(1).unwrap());
        let outer = one.enter();
        let inner = zero.enter();
        drop(outer);
        assert_eq!(Device::current().unwrap(), zero, "the inner guard is alive");
        drop(inner);
        assert_eq!(
            Device::current().unwrap(),
            zero,
            "no guard is left: the base device"
        );
        one.make_current();
        let scope = zero.enter();
        drop(scope);
        assert_eq!(
            Device::current().unwrap(),
            one,
            "make_current before a scope is restored"
        );
    })
    .join()
    .unwrap();
}

#[test]
fn an_event_is_recorded_only_on_streams_of_its_device() {
    two_simulated_devices();
    std::thread::spawn(|| {
        let event = Event::new().unwrap(); // device 0
        let other = Stream::on_device(Device::get(1).unwrap()).unwrap();
        match event.record_on(&other) {
            Err(Error::EventOnOtherDevice {
                event_device: 0,
                stream_device: 1,
            }) => {}
            other => panic!("expected EventOnOtherDevice, got {other:?}"),
        }
        assert!(!event.is_recorded());
        event.record_on(&Stream::new().unwrap()).unwrap();
        // Waiting on another device's event is allowed, as in CUDA.
        other.wait_event(&event).unwrap();
        other.synchronize().unwrap();
    })
    .join()
    .unwrap();
}

#[test]
fn each_simulated_device_has_its_own_memory() {
    two_simulated_devices();
    std::thread::spawn(|| {
        let (zero, one) = (Device::get(0).unwrap(), Device::get(1).unwrap());
        let (free0, total0) = zero.memory_info().unwrap();
        let (free1, _) = one.memory_info().unwrap();
        let stream = Stream::on_device(one).unwrap();
        let buffer = DeviceBuffer::<u8>::zeroed_on(64 << 20, &stream).unwrap();
        assert_eq!(buffer.device(), 1);
        assert_eq!(one.memory_info().unwrap().0, free1 - (64 << 20));
        assert_eq!(
            zero.memory_info().unwrap(),
            (free0, total0),
            "device 0 is untouched"
        );
        buffer.free_sync().unwrap();
        assert_eq!(one.memory_info().unwrap().0, free1);
    })
    .join()
    .unwrap();
}

#[test]
fn graphs_stay_on_their_device() {
    use gpu_kernels::fill;
    use gpu_runtime::{kernel_args, launch};
    two_simulated_devices();
    let (zero, one) = (Device::get(0).unwrap(), Device::get(1).unwrap());
    let s1 = Stream::on_device(one).unwrap();
    let s0 = Stream::on_device(zero).unwrap();
    let mut x = DeviceBuffer::<f32>::zeroed_on(256, &s1).unwrap();
    let graph = s1
        .capture(|s| launch!(fill[1, 256, s](3.0f32, &mut x)))
        .unwrap();
    let node = graph.kernel_nodes()[0].clone();
    let mut exec = graph.instantiate().unwrap();
    // Launched on a stream of another device: an error naming both.
    let err = exec.launch(&s0).unwrap_err();
    assert!(err.to_string().contains("device 1"), "{err}");
    exec.launch(&s1).unwrap();
    assert_eq!(x.copy_to_host_sync(&s1).unwrap(), vec![3.0; 256]);
    // Arguments checked for device 0 do not go into a graph of device 1.
    let mut y = DeviceBuffer::<f32>::zeroed_on(256, &s0).unwrap();
    let args = kernel_args!(fill[1, 256, s0](4.0f32, &mut y)).unwrap();
    assert!(exec.set_kernel_args(&node, args).is_err());
    // A stream of device 0 cannot join a capture of device 1.
    let capture = s1.begin_capture().unwrap();
    let e = s1.record().unwrap();
    assert!(matches!(s0.wait_event(&e), Err(Error::Capture { .. })));
    capture.end().unwrap();
}
