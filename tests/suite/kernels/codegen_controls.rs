//! The codegen controls CUDA C programmers rely on: launch bounds
//! (`#[kernel(launch_bounds = (max_threads, min_blocks))]`, PTX `.maxntid`
//! and `.minnctapersm`, the launcher refusing larger blocks), declared
//! blocks as `.reqntid`, and loops unrolled by `unroll!` (straight-line PTX,
//! the same results). On the simulator where there is no GPU, on the GPU
//! otherwise; the PTX checks run anywhere.

use gpu_runtime::{launch, DeviceBuffer, Error, Stream};
use gpu_test_kernels::codegen::{self as k, Taps25};

/// The body of entry point `name` in the test kernels' PTX.
fn entry_body(name: &str) -> &'static str {
    let ptx = gpu_test_kernels::KERNEL_MODULE.ptx();
    let start = ptx
        .find(&format!(".visible .entry {name}("))
        .unwrap_or_else(|| panic!("no entry point `{name}`"));
    let body = &ptx[start..];
    &body[..body.find("\n}").expect("the body closes")]
}

/// Whether a body branches back to a label above the branch: a loop.
fn has_a_loop(body: &str) -> bool {
    let lines: Vec<&str> = body.lines().collect();
    let label_at = |label: &str| {
        lines
            .iter()
            .position(|l| l.split_whitespace().next() == Some(&format!("{label}:")))
    };
    lines.iter().enumerate().any(|(at, line)| {
        line.split_whitespace()
            .skip_while(|w| !w.starts_with("bra"))
            .nth(1)
            .map(|target| target.trim_end_matches(';'))
            .and_then(label_at)
            .is_some_and(|target| target < at)
    })
}

#[test]
fn launch_bounds_are_ptx_directives_and_the_launcher_refuses_larger_blocks() {
    for entry in ["bounded_copy", "bounded_copy__1d"] {
        let ptx = gpu_test_kernels::KERNEL_MODULE.ptx();
        let at = ptx.find(&format!(".visible .entry {entry}(")).unwrap();
        let header = &ptx[at..at + ptx[at..].find('{').unwrap()];
        assert!(header.contains(".maxntid 128"), "{header}");
        assert!(header.contains(".minnctapersm 4"), "{header}");
    }
    let s = Stream::new().unwrap();
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
    let mut out = DeviceBuffer::to_device_sync(&vec![f32::NAN; 1000], &s).unwrap();
    for threads in [256u32, 129, 1024] {
        match launch!(k::bounded_copy[1000usize.div_ceil(threads as usize), threads, s](&dx, &mut out))
        {
            Err(Error::InvalidLaunch { kernel, reason }) => {
                assert_eq!(kernel, "bounded_copy");
                assert!(
                    reason.contains("at most 128 threads") && reason.contains("launch_bounds"),
                    "{reason}"
                );
            }
            other => panic!("{threads} threads: expected InvalidLaunch, got {other:?}"),
        }
    }
    assert!(
        out.copy_to_host_sync(&s)
            .unwrap()
            .iter()
            .all(|v| v.is_nan()),
        "nothing ran"
    );
    for threads in [128u32, 100, 1] {
        launch!(k::bounded_copy[1000usize.div_ceil(threads as usize), threads, s](&dx, &mut out))
            .unwrap();
        assert_eq!(out.copy_to_host_sync(&s).unwrap(), x);
    }
}

#[test]
fn a_declared_block_is_a_required_thread_count() {
    let body = gpu_test_kernels::KERNEL_MODULE.ptx();
    let at = body.find(".visible .entry mark_tiles_8x8(").unwrap();
    let header = &body[at..at + body[at..].find('{').unwrap()];
    assert!(header.contains(".reqntid 256, 1, 1"), "{header}");
}

fn taps() -> Taps25 {
    Taps25 {
        w: core::array::from_fn(|k| (k as f32 - 12.0) / 8.0),
    }
}

#[test]
fn a_fully_unrolled_loop_is_straight_line_code_with_the_same_results() {
    let body = entry_body("taps_unrolled__1d");
    assert_eq!(body.matches("fma.rn.f32").count(), 25, "{body}");
    assert!(!has_a_loop(body), "{body}");
    let s = Stream::new().unwrap();
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
    let mut out = DeviceBuffer::to_device_sync(&vec![f32::NAN; n], &s).unwrap();
    launch!(k::taps_unrolled[n.div_ceil(128), 128, s](&dx, taps(), &mut out)).unwrap();
    let got = out.copy_to_host_sync(&s).unwrap();
    let w = taps().w;
    for (i, &got) in got.iter().enumerate() {
        let mut want = 0.0f32;
        for (k, wk) in w.iter().enumerate() {
            want = wk.mul_add(x.get(i + k).copied().unwrap_or(0.0), want);
        }
        assert_eq!(got, want, "element {i}");
    }
}

#[test]
fn a_loop_unrolled_by_four_runs_every_iteration_once_in_order() {
    let body = entry_body("window_sum_unrolled_by_4__1d");
    // The loop of four copies, and the rest one at a time after it.
    assert!(body.matches("add.f32").count() >= 5, "{body}");
    assert!(has_a_loop(body), "{body}");
    let s = Stream::new().unwrap();
    let n = 300;
    let x: Vec<f32> = (0..n).map(|i| (i % 5) as f32 + 0.5).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &s).unwrap();
    for width in [0u32, 1, 3, 4, 5, 8, 13, 301] {
        let mut out = DeviceBuffer::to_device_sync(&vec![f32::NAN; n], &s).unwrap();
        launch!(k::window_sum_unrolled_by_4[n.div_ceil(64), 64, s](&dx, width, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&s).unwrap();
        for (i, &got) in got.iter().enumerate() {
            let mut want = 0.0f32;
            for k in 0..width as usize {
                want += x.get(i + k).copied().unwrap_or(0.0);
            }
            assert_eq!(got, want, "width {width}, element {i}");
        }
    }
}
