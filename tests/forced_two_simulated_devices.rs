//! Behaviour that needs two devices, on the CPU simulator with two simulated
//! devices (`GPU_SIM_DEVICES=2`), forced for this binary so that it runs the
//! same on every machine: device scopes, the device checks of events and
//! graphs, and the multi-device tests of `tests/multi_device` (peer copies
//! and access, collectives).

mod common;
#[macro_use]
mod multi_device;

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

fn run_here(_test: &str) -> bool {
    two_simulated_devices();
    true
}

multi_device_tests!(run_here);

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

/// Counts memory, so it runs alone: in a child process running only this
/// test (the other tests of this binary allocate on both devices).
#[test]
fn each_simulated_device_has_its_own_memory() {
    const ALONE: &str = "SIMULATED_DEVICES_MEMORY_TEST_ALONE";
    if std::env::var_os(ALONE).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "each_simulated_device_has_its_own_memory",
                "--nocapture",
            ])
            .env(ALONE, "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
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
        // Back in the device's pool, which keeps it (as CUDA's does) until
        // it is released to the system.
        assert_eq!(one.memory_info().unwrap().0, free1 - (64 << 20));
        assert_eq!(one.memory_pool().stats().unwrap().free_bytes(), 64 << 20);
        one.release_pool_memory().unwrap();
        assert_eq!(one.memory_info().unwrap().0, free1);
    })
    .join()
    .unwrap();
}

/// Ranks that call different collectives get an error naming both calls
/// (NCCL would hang or compute garbage); here in two threads of this process.
#[test]
fn ranks_calling_different_collectives_fail_with_both_calls_named() {
    use gpu_runtime::{Communicator, ReduceOp, UniqueId};
    two_simulated_devices();
    let id = UniqueId::new().unwrap();
    let ranks: Vec<_> = (0..2)
        .map(|rank| {
            let id = id.clone();
            std::thread::spawn(move || {
                let device = Device::get(rank).unwrap();
                let mut comm = Communicator::init_rank(&id, 2, rank, device).unwrap();
                let stream = Stream::on_device(device).unwrap();
                let send = DeviceBuffer::<f32>::zeroed_on(8, &stream).unwrap();
                let mut recv = DeviceBuffer::<f32>::zeroed_on(16, &stream).unwrap();
                if rank == 0 {
                    let mut recv = recv.slice_mut(0..8).unwrap();
                    comm.all_reduce(&send, recv.reborrow(), ReduceOp::Sum, &stream)
                        .unwrap();
                } else {
                    comm.all_gather(&send, &mut recv, &stream).unwrap();
                }
                stream.synchronize().unwrap_err().to_string()
            })
        })
        .collect();
    for rank in ranks {
        let message = rank.join().unwrap();
        assert!(
            message.contains("rank 0 called all-reduce (sum) of 8 f32")
                && message.contains("rank 1 called all-gather of 8 f32 per rank"),
            "{message}"
        );
    }
}

/// With `GPU_SIM_PEER_ACCESS=none` the simulated devices have no peer link,
/// and with `GPU_SIM_TIMEOUT_SECS=1` a rank whose peer never comes fails
/// after a second; in a child process, which reads those variables.
#[test]
fn no_peer_link_and_a_missing_rank_are_errors() {
    use gpu_runtime::{Communicator, ReduceOp, UniqueId, SIM_PEER_ACCESS_ENV, SIM_TIMEOUT_ENV};
    if std::env::var_os(SIM_PEER_ACCESS_ENV).is_some() {
        two_simulated_devices();
        let (zero, one) = (Device::get(0).unwrap(), Device::get(1).unwrap());
        assert!(!zero.can_access_peer(one).unwrap());
        let err = zero.enable_peer_access(one).unwrap_err();
        assert_eq!(err, Error::PeerAccessUnsupported { device: 0, peer: 1 });
        assert!(err.to_string().contains("no peer link"), "{err}");
        assert!(!zero.peer_access_enabled(one));
        // Copies between the devices still work (through host memory on a GPU).
        let s1 = Stream::on_device(one).unwrap();
        let a = DeviceBuffer::to_device_sync(&[1.0f32, 2.0], &Stream::new().unwrap()).unwrap();
        assert_eq!(
            a.clone_on(&s1).unwrap().copy_to_host_sync(&s1).unwrap(),
            [1.0, 2.0]
        );
        // Two ranks on one device are refused (by NCCL too).
        let id = UniqueId::new().unwrap();
        let twin = {
            let id = id.clone();
            std::thread::spawn(move || Communicator::init_rank(&id, 2, 1, zero).map(drop))
        };
        let first = Communicator::init_rank(&id, 2, 0, zero).map(drop);
        for outcome in [first, twin.join().unwrap()] {
            let err = outcome.unwrap_err().to_string();
            assert!(
                err.contains("ranks 0 and 1 are both on device 0")
                    || err.contains("ranks 1 and 0 are both on device 0"),
                "{err}"
            );
        }
        // Rank 1 of 2 never joins: rank 0 fails.
        let id = UniqueId::new().unwrap();
        let err = Communicator::init_rank(&id, 2, 0, zero)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("rank 0 waited") && err.contains("for rank(s) 1 to join"),
            "{err}"
        );
        // Rank 1 joins but never calls the all-reduce: rank 0's fails.
        let id = UniqueId::new().unwrap();
        let late = {
            let id = id.clone();
            std::thread::spawn(move || Communicator::init_rank(&id, 2, 1, one).unwrap())
        };
        let mut comm = Communicator::init_rank(&id, 2, 0, zero).unwrap();
        let _idle = late.join().unwrap();
        let stream = Stream::on_device(zero).unwrap();
        let mut x = DeviceBuffer::<f32>::zeroed_on(4, &stream).unwrap();
        comm.all_reduce_in_place(&mut x, ReduceOp::Sum, &stream)
            .unwrap();
        let err = stream.synchronize().unwrap_err().to_string();
        assert!(
            err.contains("rank 0 waited") && err.contains("for rank(s) 1, which did not take part"),
            "{err}"
        );
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "no_peer_link_and_a_missing_rank_are_errors",
            "--nocapture",
        ])
        .env(SIM_PEER_ACCESS_ENV, "none")
        .env(SIM_TIMEOUT_ENV, "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
