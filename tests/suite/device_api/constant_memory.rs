//! Constant memory: `gpu_device::constant!` values set from the host with
//! `SetConstant::set`, read by every thread; zeros before the first set;
//! ordered across streams as buffers are (a set while a kernel on another
//! stream reads the constant waits for that kernel). On the simulator where
//! there is no GPU, on the GPU otherwise. (Writing a constant from a kernel
//! does not compile: `tests/ui/constant/constant_written_by_a_kernel.rs`.)

use crate::common;
use gpu_runtime::{launch, DeviceBuffer, SetConstant, Stream};
use gpu_test_kernels::constants::{convolve5, read_taps_after, AFFINE, TAPS};
use std::sync::Mutex;

/// The constants are the process's: one test at a time sets them.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn convolve_on_cpu(x: &[f32], taps: [f32; 5], affine: [f64; 2]) -> Vec<f32> {
    x.windows(5)
        .map(|w| {
            let mut sum = 0.0f32;
            for k in 0..5 {
                sum += taps[k] * w[k];
            }
            (f64::from(sum) * affine[0] + affine[1]) as f32
        })
        .collect()
}

#[test]
fn every_thread_reads_the_constants_the_host_set() {
    // A constant's first set in a process waits for the whole device, which
    // another test's capture would refuse: in a process of its own.
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let stream = Stream::new().unwrap();
    let x: Vec<f32> = (0..300).map(|i| (i % 17) as f32 - 8.0).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(296, &stream).unwrap();
    for (taps, affine) in [
        ([1.0, 2.0, 3.0, 2.0, 1.0], [0.5, 1.0]),
        ([0.0, 0.0, 1.0, 0.0, 0.0], [1.0, 0.0]),
        ([-1.0, 0.5, 0.25, 0.5, -1.0], [2.0, -3.0]),
    ] {
        TAPS.set(taps, &stream).unwrap();
        AFFINE.set(affine, &stream).unwrap();
        launch!(convolve5[2, 256, stream](&dx, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        assert_eq!(
            got,
            convolve_on_cpu(&x, taps, affine),
            "{taps:?} {affine:?}"
        );
    }
}

/// Attacks the ordering: a kernel on one stream reads the constant late (it
/// spins first), while the host sets a new value on another stream. The
/// set waits for the kernel, which reads the old value whole; a launch
/// after the set reads the new one.
#[test]
fn a_constant_set_while_a_kernel_reads_it_waits_for_that_kernel() {
    // A constant's first set in a process waits for the whole device, which
    // another test's capture would refuse: in a process of its own.
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (reader, setter) = (Stream::new().unwrap(), Stream::new().unwrap());
    let mut early = DeviceBuffer::<f32>::zeroed_on(64, &reader).unwrap();
    let mut late = DeviceBuffer::<f32>::zeroed_on(64, &setter).unwrap();
    for round in 0..3 {
        let old = [1.0 + round as f32; 5];
        let new = [100.0 + round as f32; 5];
        // The old value is the setter stream's write, complete.
        TAPS.set(old, &setter).unwrap();
        setter.synchronize().unwrap();
        // Reads on `reader`, late; then the setter writes again.
        launch!(read_taps_after[2, 32, reader](200_000, &mut early)).unwrap();
        TAPS.set(new, &setter).unwrap();
        launch!(read_taps_after[2, 32, setter](0, &mut late)).unwrap();
        assert_eq!(
            early.copy_to_host_sync(&reader).unwrap(),
            vec![old[0]; 64],
            "round {round}"
        );
        assert_eq!(
            late.copy_to_host_sync(&setter).unwrap(),
            vec![new[0]; 64],
            "round {round}"
        );
    }
}

#[test]
fn setting_a_constant_in_a_capture_is_refused() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let stream = Stream::new().unwrap();
    let refused = stream.capture(|s| {
        let err = TAPS.set([0.0; 5], s).unwrap_err();
        Err(err)
    });
    let err = refused.unwrap_err();
    assert!(
        err.to_string().contains("set it before the capture"),
        "{err}"
    );
}
