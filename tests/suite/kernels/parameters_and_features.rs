//! Kernels on the GPU: every parameter kind, every device feature, results
//! checked against the CPU. Run by scripts/gpu-bundle.sh on a GPU machine.

use gpu_kernels::{add_kernel, fill, saxpy};
use gpu_runtime::{current_stream, launch, Device, DeviceBuffer, Stream};
use gpu_test_kernels::{self as testing, Affine};

fn blocks(n: usize, threads: usize) -> usize {
    n.div_ceil(threads).max(1)
}

#[test]
fn add_kernel_matches_cpu_at_every_size() {
    let stream = Stream::new().unwrap();
    for n in [0usize, 1, 31, 255, 256, 257, 1000, 1 << 20, (1 << 20) + 3] {
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..n).map(|i| 7.0 - i as f32).collect();
        let da = DeviceBuffer::to_device_sync(&a, &stream).unwrap();
        let db = DeviceBuffer::to_device_sync(&b, &stream).unwrap();
        let mut dc = DeviceBuffer::to_device_sync(&vec![f32::NAN; n], &stream).unwrap();
        launch!(add_kernel[blocks(n, 256), 256, stream](&da, &db, &mut dc)).unwrap();
        let c = dc.copy_to_host_sync(&stream).unwrap();
        assert_eq!(c.len(), n);
        for i in 0..n {
            assert_eq!(c[i], a[i] + b[i], "n = {n}, element {i}");
        }
    }
}

#[test]
fn launch_without_stream_uses_the_current_stream() {
    let stream = current_stream().unwrap();
    let x: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let y: Vec<f32> = (0..1000).map(|i| 1.0 - i as f32).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let dy = DeviceBuffer::to_device_sync(&y, &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::device_array(1000).unwrap();
    launch!(saxpy[4, 256](2.5, &dx, &dy, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for i in 0..1000 {
        assert_eq!(got[i], 2.5 * x[i] + y[i]);
    }
}

#[test]
fn generic_kernel_runs_each_instance() {
    let stream = Stream::new().unwrap();
    fn check<T: gpu_runtime::DeviceCopy + PartialEq + std::fmt::Debug + fill::Instance>(
        value: T,
        stream: &Stream,
    ) {
        let mut out = DeviceBuffer::<T>::device_array(777).unwrap();
        launch!(fill[4, 256, stream](value, &mut out)).unwrap();
        assert!(
            out.copy_to_host_sync(stream)
                .unwrap()
                .iter()
                .all(|v| *v == value),
            "{value:?}"
        );
    }
    check(1.5f32, &stream);
    check(-2.25f64, &stream);
    check(-7i32, &stream);
    check(0xdead_beefu32, &stream);
    check(u64::MAX - 3, &stream);
}

#[test]
fn struct_bool_and_small_scalars_cross_by_value() {
    let stream = Stream::new().unwrap();
    let x: Vec<f32> = (0..300).map(|i| i as f32).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::device_array(300).unwrap();
    for negate in [false, true] {
        let p = Affine {
            scale: 3.0,
            offset: -1.0,
            negate,
        };
        launch!(testing::affine[2, 256, stream](p, &dx, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        for i in 0..300 {
            let y = 3.0 * x[i] - 1.0;
            assert_eq!(got[i], if negate { -y } else { y });
        }
    }
    let a: Vec<i64> = (0..100).collect();
    let b: Vec<i64> = (0..100).map(|i| -i * 1000).collect();
    let (da, db) = (
        DeviceBuffer::to_device_sync(&a, &stream).unwrap(),
        DeviceBuffer::to_device_sync(&b, &stream).unwrap(),
    );
    let mut sel = DeviceBuffer::<i64>::device_array(100).unwrap();
    for (first, offset) in [(true, 7u8), (false, 200u8)] {
        launch!(testing::select[1, 128, stream](first, offset, &da, &db, &mut sel)).unwrap();
        let got = sel.copy_to_host_sync(&stream).unwrap();
        let src = if first { &a } else { &b };
        for i in 0..100 {
            assert_eq!(got[i], src[i] + offset as i64);
        }
    }
}

#[test]
fn the_3d_witness_is_grid_3d_and_writes_its_own_element() {
    let stream = Stream::new().unwrap();
    let (grid, block) = ((3u32, 2u32, 2u32), (8u32, 4u32, 2u32));
    let (depth, rows, cols) = (2 * 2, 2 * 4, 3 * 8);
    let n = depth * rows * cols;
    let mut out = DeviceBuffer::<[u32; 6]>::device_array(n).unwrap();
    launch!(testing::coordinates[grid, block, stream](
        out.view_3d_mut(depth, rows, cols).unwrap()
    ))
    .unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for (slot, [x, y, z, gx, gy, gz]) in got.iter().enumerate() {
        let expected = (slot % cols, slot / cols % rows, slot / (cols * rows));
        assert_eq!(
            (*x as usize, *y as usize, *z as usize),
            expected,
            "element {slot} is written by the thread at its (x, y, z)"
        );
        assert_eq!((x, y, z), (gx, gy, gz), "the witness is grid_3d()");
    }
}

#[test]
fn the_2d_witness_writes_row_y_column_x_of_a_matrix_larger_and_smaller_than_the_grid() {
    let stream = Stream::new().unwrap();
    // 3 x 2 blocks of 16 x 8 threads: 48 x 16 threads over a 13 x 37 matrix
    // (fewer rows, fewer columns than threads: per-axis bounds).
    for (rows, cols) in [(13usize, 37usize), (16, 48), (20, 50)] {
        let mut out =
            DeviceBuffer::to_device_sync(&vec![[u32::MAX; 2]; rows * cols], &stream).unwrap();
        launch!(testing::coordinates_2d[(3, 2), (16, 8), stream](
            out.view_2d_mut(rows, cols).unwrap()
        ))
        .unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        for r in 0..rows {
            for c in 0..cols {
                let expected = if r < 16 && c < 48 {
                    [c as u32, r as u32]
                } else {
                    [u32::MAX; 2]
                };
                assert_eq!(
                    got[r * cols + c],
                    expected,
                    "{rows} x {cols}, element ({r}, {c})"
                );
            }
        }
    }
}

#[test]
fn a_view_too_large_for_its_buffer_is_an_error_naming_the_sizes() {
    let mut out = DeviceBuffer::<f32>::device_array(100).unwrap();
    let err = out
        .view_2d_mut(11, 10)
        .err()
        .expect("11 x 10 does not fit 100");
    let text = err.to_string();
    assert!(
        text.contains("11 x 10") && text.contains("110") && text.contains("100"),
        "{text}"
    );
    let err = out.view_3d_mut(usize::MAX, 2, 1).err().expect("overflows");
    assert!(err.to_string().contains("usize"), "{err}");
    assert_eq!(out.view_2d_mut(10, 10).unwrap().extents(), (10, 10));
    assert_eq!(
        out.view_2d_mut(3, 7).unwrap().into_flat().len(),
        21,
        "the prefix of 21 elements"
    );
}

#[test]
fn launch_shape_helpers_match_cuda() {
    let stream = Stream::new().unwrap();
    let mut shape = DeviceBuffer::<[u32; 4]>::device_array(5 * 64).unwrap();
    launch!(testing::launch_shape[5, 64, stream](&mut shape)).unwrap();
    for (i, [gridsize, bdim, gdim, tid]) in shape
        .copy_to_host_sync(&stream)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        assert_eq!((gridsize, bdim, gdim, tid), (320, 64, 5, (i % 64) as u32));
    }
}

#[test]
fn static_shared_memory_and_barriers_sum_each_block() {
    let stream = Stream::new().unwrap();
    let n = 256 * 40 + 17;
    let input: Vec<f32> = (0..n).map(|i| (i % 13) as f32).collect();
    let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
    let nblocks = blocks(n, 256);
    let mut sums = DeviceBuffer::<f32>::device_array(nblocks).unwrap();
    launch!(testing::block_sum_static[nblocks, 256, stream](&din, &mut sums)).unwrap();
    let got = sums.copy_to_host_sync(&stream).unwrap();
    for (b, sum) in got.iter().enumerate() {
        let expected: f32 = input[b * 256..((b + 1) * 256).min(n)].iter().sum();
        assert_eq!(*sum, expected, "block {b}");
    }
}

#[test]
fn dynamic_shared_memory_reverses_blocks_including_above_48_kib() {
    let stream = Stream::new().unwrap();
    for threads in [32usize, 256, 1024] {
        let n = threads * 6;
        let input: Vec<u32> = (0..n as u32).collect();
        let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
        let mut out = DeviceBuffer::<u32>::device_array(n).unwrap();
        launch!(testing::reverse_in_blocks[6, threads, stream, threads * 4](&din, &mut out))
            .unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        for b in 0..6 {
            for t in 0..threads {
                assert_eq!(got[b * threads + t], input[b * threads + threads - 1 - t]);
            }
        }
    }
    // More dynamic shared memory than the 48 KiB default: the runtime opts the
    // kernel in. The kernel uses the first bytes only.
    let big = 64 * 1024;
    if Device::get(0).unwrap().limits().max_shared_per_block_optin as usize >= big {
        let input: Vec<u32> = (0..256).collect();
        let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
        let mut out = DeviceBuffer::<u32>::device_array(256).unwrap();
        launch!(testing::reverse_in_blocks[1, 256, stream, big](&din, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        assert_eq!(got, (0..256).rev().collect::<Vec<u32>>());
    }
}

#[test]
fn warp_shuffles_move_values_between_lanes() {
    let stream = Stream::new().unwrap();
    let n = 128;
    let input: Vec<i64> = (0..n as i64).map(|i| i * 1_000_000_007 - 5).collect();
    let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
    let mut out = DeviceBuffer::<[i64; 4]>::device_array(n).unwrap();
    launch!(testing::warp_shuffles[1, n, stream](&din, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for i in 0..n {
        let warp = i / 32 * 32;
        let lane = i % 32;
        let sum: i64 = input[warp..warp + 32].iter().sum();
        let down = if lane < 31 { input[i + 1] } else { input[i] };
        let up = if lane > 0 { input[i - 1] } else { input[i] };
        assert_eq!(got[i], [sum, down, up, input[warp]], "thread {i}");
    }
}

#[test]
fn atomics_are_atomic_for_every_type() {
    let stream = Stream::new().unwrap();
    let n = 10_000usize;
    macro_rules! check {
        ($t:ty, $values:expr) => {{
            let values: Vec<$t> = $values;
            let dv = DeviceBuffer::to_device_sync(&values, &stream).unwrap();
            let mut init: Vec<$t> = vec![<$t>::default(); 6];
            init[1] = values[0];
            init[2] = values[0];
            let mut cells = DeviceBuffer::to_device_sync(&init, &stream).unwrap();
            launch!(testing::atomics[blocks(n, 256), 256, stream](&dv, &mut cells)).unwrap();
            let got = cells.copy_to_host_sync(&stream).unwrap();
            let min = values.iter().copied().fold(values[0], |a, b| if b < a { b } else { a });
            let max = values.iter().copied().fold(values[0], |a, b| if b > a { b } else { a });
            assert_eq!(got[1], min, "{} min", stringify!($t));
            assert_eq!(got[2], max, "{} max", stringify!($t));
            assert!(values.contains(&got[3]), "{} exchange left a thread's value", stringify!($t));
            assert_eq!(got[4], 1 as $t, "{} exactly one compare-and-swap succeeds", stringify!($t));
            assert_eq!(got[5], 1 as $t);
            got[0]
        }};
    }
    let sum = check!(i32, (0..n as i32).map(|i| i - 5000).collect());
    assert_eq!(sum, (0..n as i32).map(|i| i - 5000).sum::<i32>());
    let sum = check!(u32, (0..n as u32).map(|i| i * 3 + 1).collect());
    assert_eq!(sum, (0..n as u32).map(|i| i * 3 + 1).sum::<u32>());
    let sum = check!(u64, (0..n as u64).map(|i| i << 33).collect());
    assert_eq!(sum, (0..n as u64).map(|i| i << 33).sum::<u64>());
    // Small integers in floats: every order of additions gives the exact sum.
    let sum = check!(f32, (0..n).map(|i| (i % 100) as f32 - 50.0).collect());
    assert_eq!(sum, (0..n).map(|i| (i % 100) as f32 - 50.0).sum::<f32>());
    let sum = check!(f64, (0..n).map(|i| i as f64 * 0.5).collect());
    assert_eq!(sum, (0..n).map(|i| i as f64 * 0.5).sum::<f64>());
}

#[test]
fn float_math_matches_the_cpu() {
    let stream = Stream::new().unwrap();
    let x: Vec<f32> = (1..2000).map(|i| i as f32 * 0.0015).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<[f32; 8]>::device_array(x.len()).unwrap();
    launch!(testing::math_f32[8, 256, stream](&dx, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for (i, &v) in x.iter().enumerate() {
        let want = [
            v.sqrt(),
            v.exp(),
            v.ln(),
            v.sin(),
            v.cos(),
            v.tanh(),
            v.floor(),
            v.powf(1.5),
        ];
        let [sqrt, .., floor, _] = got[i];
        assert_eq!(sqrt, want[0], "sqrt is correctly rounded");
        assert_eq!(floor, want[6]);
        for (k, name) in [
            (1, "exp"),
            (2, "ln"),
            (3, "sin"),
            (4, "cos"),
            (5, "tanh"),
            (7, "powf"),
        ] {
            let err = (got[i][k] - want[k]).abs();
            let tolerance = 2e-6 + 4e-6 * want[k].abs();
            assert!(
                err <= tolerance,
                "{name}({v}) = {} on the GPU, {} on the CPU",
                got[i][k],
                want[k]
            );
        }
    }
    let y: Vec<f64> = (0..500).map(|i| i as f64 * 0.37 - 50.0).collect();
    let dy = DeviceBuffer::to_device_sync(&y, &stream).unwrap();
    let mut out = DeviceBuffer::<[f64; 4]>::device_array(y.len()).unwrap();
    launch!(testing::math_f64[2, 256, stream](&dy, &mut out)).unwrap();
    for (i, got) in out
        .copy_to_host_sync(&stream)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        let v = y[i];
        assert_eq!(got[1..], [v.floor(), v.ceil(), v.mul_add(v, 1.0)]);
        if v >= 0.0 {
            assert_eq!(got[0], v.sqrt());
        } else {
            assert!(got[0].is_nan());
        }
    }
}

#[test]
fn views_launch_on_parts_of_a_buffer() {
    let stream = Stream::new().unwrap();
    let a: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let da = DeviceBuffer::to_device_sync(&a, &stream).unwrap();
    let mut out = DeviceBuffer::to_device_sync(&vec![-1.0f32; 1000], &stream).unwrap();
    let (left, right) = out.view_mut().split_at(500).unwrap();
    launch!(add_kernel[2, 256, stream](da.slice(0..500).unwrap(), da.slice(500..1000).unwrap(), left)).unwrap();
    launch!(fill[2, 256, stream](9.0f32, right)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for i in 0..500 {
        assert_eq!(got[i], a[i] + a[500 + i]);
        assert_eq!(got[500 + i], 9.0);
    }
    assert!(
        da.slice(900..1001).is_none(),
        "out-of-range views are refused"
    );
}
