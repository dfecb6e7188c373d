//! Kernels that need a GPU architecture (`#[kernel(arch = "...")]`) on
//! devices of several compute capabilities: the CPU simulator with three
//! devices of compute capability 9.0, 8.0 and 7.5
//! (`GPU_SIM_DEVICES=3`, `GPU_SIM_COMPUTE_CAPABILITY=9.0,8.0,7.5`), forced
//! for this binary so that it runs the same on every machine. A device too
//! old for a kernel refuses its launch with an error naming the kernel, what
//! it needs and the device. And `gpu_ops::matmul`'s path on each: `wgmma`
//! on 9.0, `mma.sync` on 8.0 (each checked against a CPU reference at
//! ragged sizes, and by the kernel that ran), an error for bf16 on 7.5.

use gpu_runtime::{
    launch, Device, DeviceBuffer, Error, Stream, BACKEND_ENV, SIMULATED_DEVICES_ENV,
    SIM_COMPUTE_CAPABILITY_ENV,
};
use gpu_test_kernels::architectures::{needs_any_arch, needs_sm_80, needs_sm_90a};
use std::sync::Once;

fn three_simulated_devices() {
    static SETUP: Once = Once::new();
    SETUP.call_once(|| {
        std::env::set_var(BACKEND_ENV, "simulator");
        std::env::set_var(SIMULATED_DEVICES_ENV, "3");
        std::env::set_var(SIM_COMPUTE_CAPABILITY_ENV, "9.0,8.0,7.5");
    });
    assert_eq!(Device::count().unwrap(), 3);
}

/// Launches `which` on device `ordinal`: the kernel's output, or its error.
fn run(ordinal: usize, which: &str) -> Result<Vec<u32>, Error> {
    let device = Device::get(ordinal).unwrap();
    device.scope(|| {
        let stream = Stream::new()?;
        let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream)?;
        match which {
            "sm_80" => launch!(needs_sm_80[1, 64, stream](&mut out))?,
            "sm_90a" => launch!(needs_sm_90a[1, 64, stream](&mut out))?,
            _ => launch!(needs_any_arch[1, 64, stream](&mut out))?,
        }
        out.copy_to_host_sync(&stream)
    })
}

#[test]
fn the_simulated_devices_have_the_compute_capabilities_set() {
    three_simulated_devices();
    let capabilities: Vec<(u32, u32)> = (0..3)
        .map(|d| Device::get(d).unwrap().limits().compute_capability)
        .collect();
    assert_eq!(capabilities, [(9, 0), (8, 0), (7, 5)]);
}

#[test]
fn a_kernel_runs_on_devices_as_new_as_it_needs() {
    three_simulated_devices();
    // The simulator runs the host build, which has no target features.
    assert_eq!(run(0, "sm_80").unwrap(), vec![0; 64]);
    assert_eq!(run(1, "sm_80").unwrap(), vec![0; 64]);
    assert_eq!(run(0, "sm_90a").unwrap(), vec![0; 64]);
    for device in 0..3 {
        assert_eq!(run(device, "any").unwrap(), vec![0; 64]);
    }
}

#[test]
fn a_device_too_old_for_a_kernel_refuses_it_naming_both() {
    three_simulated_devices();
    let error = run(2, "sm_80").unwrap_err();
    assert!(
        matches!(
            &error,
            Error::ArchitectureTooOld {
                kernel: "needs_sm_80",
                device: 2,
                compute_capability: (7, 5),
                ..
            }
        ),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("kernel `needs_sm_80` needs sm_80 (compute capability 8.0 or later) (its `arch` option), and device 2 (CPU simulator) has compute capability 7.5"),
        "{message}"
    );
    // sm_90a's features are 9.0's alone: older and newer devices refuse it.
    let message = run(1, "sm_90a").unwrap_err().to_string();
    assert!(
        message.contains("kernel `needs_sm_90a` needs sm_90a (compute capability 9.0 exactly)")
            && message.contains("compute capability 8.0"),
        "{message}"
    );
    assert!(run(2, "sm_90a").is_err());
    // The refusal is no fault: the device goes on running what it can.
    assert_eq!(run(2, "any").unwrap(), vec![0; 64]);
}

/// `gpu_ops::matmul` of bf16 runs on tensor cores: on compute capability
/// 8.0 and 9.0, and on 7.5 it is an error naming the device and what bf16
/// needs (f32 multiplies there, on the FP32 SGEMM).
#[test]
fn bf16_matmul_needs_sm_80_and_f32_runs_everywhere() {
    use gpu_device::half::bf16;
    three_simulated_devices();
    let product = |ordinal: usize| {
        Device::get(ordinal).unwrap().scope(|| {
            let one = [1.0f32; 6].map(bf16::from_f32);
            let (a, b) = (
                DeviceBuffer::from_host_sync(&one)?,
                DeviceBuffer::from_host_sync(&one)?,
            );
            gpu_ops::matmul(&a, (2, 3), &b, (3, 2))?.to_host_sync()
        })
    };
    for device in [0, 1] {
        let c: Vec<f32> = product(device)
            .unwrap()
            .into_iter()
            .map(bf16::to_f32)
            .collect();
        assert_eq!(c, [3.0; 4], "device {device}");
    }
    let message = product(2).unwrap_err().to_string();
    assert!(
        message.contains(
            "bf16 needs tensor cores (sm_80 or later), and device 2 is compute capability 7.5"
        ),
        "{message}"
    );
    let c = Device::get(2)
        .unwrap()
        .scope(|| {
            let (a, b) = (
                DeviceBuffer::from_host_sync(&[1.0f32; 6])?,
                DeviceBuffer::from_host_sync(&[2.0f32; 6])?,
            );
            gpu_ops::matmul(&a, (3, 2), &b, (2, 3))?.to_host_sync()
        })
        .unwrap();
    assert_eq!(c, [4.0f32; 9]);
}

/// `gpu_ops::matmul` of `T` (bf16 or f16, made by `from`, read by `to`)
/// at ragged sizes on device `ordinal`, against an f64 reference (one
/// rounding of C, f32 accumulation); the kernel that ran.
fn ragged_products<T: gpu_ops::MatmulElement>(
    ordinal: usize,
    from: fn(f32) -> T,
    to: fn(T) -> f64,
) -> &'static str {
    let mut kernels = Vec::new();
    for (m, k, n) in [(130, 67, 40), (17, 300, 9), (129, 65, 257)] {
        // Small integers over 8: exact in bf16, products summed exactly.
        let value = |i: usize, seed: usize| ((i * 7 + seed) % 17) as f32 / 8.0 - 1.0;
        let a: Vec<T> = (0..m * k).map(|i| from(value(i, 3))).collect();
        let b: Vec<T> = (0..k * n).map(|i| from(value(i, 5))).collect();
        let (got, kernel) = Device::get(ordinal)
            .unwrap()
            .scope(|| {
                let stream = Stream::new()?;
                let da = DeviceBuffer::to_device_sync(&a, &stream)?;
                let db = DeviceBuffer::to_device_sync(&b, &stream)?;
                let c = gpu_ops::matmul_on(&da, (m, k), &db, (k, n), &stream)?;
                let kernel = stream.last_kernel();
                Ok::<_, Error>((c.copy_to_host_sync(&stream)?, kernel))
            })
            .unwrap();
        for i in 0..m {
            for j in 0..n {
                let sum: f64 = (0..k).map(|kk| to(a[i * k + kk]) * to(b[kk * n + j])).sum();
                let g = to(got[i * n + j]);
                assert!(
                    (g - sum).abs() <= sum.abs() / 128.0,
                    "device {ordinal}, {m} × {k} @ {k} × {n}: C[{i}][{j}] is {g}, the reference {sum}"
                );
            }
        }
        kernels.push(kernel.expect("a kernel ran"));
    }
    assert!(kernels.iter().all(|&k| k == kernels[0]), "{kernels:?}");
    kernels[0]
}

/// bf16 and f16 `matmul` run `wgmma` on compute capability 9.0 and
/// `mma.sync` on 8.0, as `matmul_path` says, all right at ragged sizes.
#[test]
fn half_matmul_runs_wgmma_on_9_0_and_mma_sync_on_8_0() {
    use gpu_device::half::{bf16, f16};
    use gpu_ops::MatmulPath;
    three_simulated_devices();
    assert_eq!(gpu_ops::matmul_path::<bf16>(0).unwrap(), MatmulPath::Wgmma);
    assert_eq!(
        gpu_ops::matmul_path::<bf16>(1).unwrap(),
        MatmulPath::MmaSync
    );
    let message = gpu_ops::matmul_path::<bf16>(2).unwrap_err().to_string();
    assert!(
        message.contains("device 2 is compute capability 7.5"),
        "{message}"
    );
    for device in 0..3 {
        assert_eq!(
            gpu_ops::matmul_path::<f32>(device).unwrap(),
            MatmulPath::Sgemm
        );
    }
    let (bf16s, f16s) = ((bf16::from_f32, bf16::to_f64), (f16::from_f32, f16::to_f64));
    assert_eq!(
        ragged_products(0, bf16s.0, bf16s.1),
        "gemm_bf16_wgmma_tma_kn"
    );
    assert_eq!(ragged_products(1, bf16s.0, bf16s.1), "gemm_bf16_mma_sync");
    assert_eq!(ragged_products(0, f16s.0, f16s.1), "gemm_f16_wgmma_tma_kn");
    assert_eq!(ragged_products(1, f16s.0, f16s.1), "gemm_f16_mma_sync");
}
