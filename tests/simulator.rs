//! The CPU simulator reports what a GPU would hide: an out-of-bounds access,
//! a `sync_threads` not reached by every thread, a shuffle with exited lanes,
//! and panics, each naming the kernel, block and thread; none hangs.
//!
//! The simulator is forced for this binary, so it runs the same on a GPU
//! machine (scripts/gpu-bundle.sh) as in CI.

use gpu_kernels::testing;
use gpu_runtime::{backend, launch, Backend, DeviceBuffer, Error, Stream, BACKEND_ENV};
use std::sync::Once;

fn simulator() -> Stream {
    static FORCE: Once = Once::new();
    // Every test calls this first, so no thread reads the environment while
    // it is set.
    FORCE.call_once(|| std::env::set_var(BACKEND_ENV, "simulator"));
    assert_eq!(backend(), Backend::Simulator);
    Stream::new().unwrap()
}

fn failure(stream: &Stream) -> (String, String) {
    match stream.synchronize().unwrap_err() {
        Error::KernelFailed { kernel, driver, .. } => (kernel.to_string(), driver.description),
        other => panic!("expected KernelFailed, got {other:?}"),
    }
}

#[test]
fn an_out_of_bounds_read_names_kernel_block_and_thread() {
    let stream = simulator();
    let x = DeviceBuffer::to_device_sync(&[1u32, 2, 3], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::read_at[2, 32, stream](&x, 3, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "read_at");
    assert!(
        message.starts_with("kernel `read_at`, block ("),
        "{message}"
    );
    assert!(
        message.contains("index out of bounds: the len is 3 but the index is 3"),
        "{message}"
    );
    // In bounds, the same kernel works: the simulator carries on.
    launch!(testing::read_at[2, 32, stream](&x, 2, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![3; 64]);
}

#[test]
fn a_barrier_not_reached_by_every_thread_is_reported_not_hung_on() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(128, &stream).unwrap();
    launch!(testing::divergent_barrier[1, 128, stream](0, &mut out)).unwrap();
    stream.synchronize().unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        vec![1; 128],
        "every thread reaching it passes"
    );
    launch!(testing::divergent_barrier[1, 128, stream](5, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "divergent_barrier");
    assert!(message.contains("block (0, 0, 0)"), "{message}");
    assert!(
        message.contains("sync_threads() is not reached by every thread"),
        "{message}"
    );
}

#[test]
fn a_shuffle_with_exited_lanes_is_reported() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::shuffle_after_exit[1, 64, stream](0, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    assert_eq!(got[..3], [1, 2, 3]);
    assert_eq!(got[31], 31, "the last lane keeps its own value");
    launch!(testing::shuffle_after_exit[1, 64, stream](3, &mut out)).unwrap();
    let (_, message) = failure(&stream);
    assert!(
        message.contains("names lane 0 in its mask, but that thread exited"),
        "{message}"
    );
}

#[test]
fn a_panic_names_its_block_and_thread() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4 * 64, &stream).unwrap();
    launch!(testing::panic_at[4, 64, stream](2, 17, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "panic_at");
    assert!(
        message.starts_with("kernel `panic_at`, block (2, 0, 0), thread (17, 0, 0): panicked: thread 17 of block 2 gave up"),
        "{message}"
    );
}

#[test]
fn the_simulated_device_describes_itself() {
    let _stream = simulator();
    let device = gpu_runtime::Device::get(0).unwrap();
    assert_eq!(device.name(), "CPU simulator");
    assert_eq!(device.limits().max_threads_per_block, 1024);
    let (free, total) = device.memory_info().unwrap();
    assert!(free <= total && total >= 1 << 30);
}

#[test]
fn a_matmul_launched_with_another_block_shape_fails_instead_of_computing_garbage() {
    let stream = simulator();
    let (m, n, k) = (40usize, 40usize, 40usize);
    let da = DeviceBuffer::to_device_sync(&vec![1.0f32; m * k], &stream).unwrap();
    let db = DeviceBuffer::to_device_sync(&vec![1.0f32; k * n], &stream).unwrap();
    let mut c = DeviceBuffer::<f32>::zeroed_on(m * n, &stream).unwrap();
    launch!(gpu_kernels::classic::matmul_tiled[(2, 5), (32, 8), stream](
        &da,
        &db,
        k,
        c.view_2d_mut(m, n).unwrap()
    ))
    .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "matmul_tiled");
    assert!(
        message.contains(
            "this kernel needs blocks of (16, 16, 1) threads; the launch has blocks of (32, 8, 1)"
        ),
        "{message}"
    );
}

#[test]
fn a_required_block_shape_fails_in_other_launches() {
    let stream = simulator();
    let mut out = DeviceBuffer::<[u32; 4]>::zeroed_on(32 * 8, &stream).unwrap();
    launch!(testing::shaped_fill[(1, 2), (32, 4), stream](true, out.view_2d_mut(8, 32).unwrap()))
        .unwrap();
    stream.synchronize().unwrap();
    launch!(testing::shaped_fill[(1, 1), (32, 8), stream](true, out.view_2d_mut(8, 32).unwrap()))
        .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "shaped_fill");
    assert!(
        message.contains(
            "this kernel needs blocks of (32, 4, 1) threads; the launch has blocks of (32, 8, 1)"
        ),
        "{message}"
    );
}

#[test]
fn a_matrix_view_of_a_slice_too_short_fails_naming_the_shape() {
    let stream = simulator();
    let input = DeviceBuffer::to_device_sync(&[0u32; 11], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    launch!(testing::matrix_read[(1, 1), (2, 2), stream](&input, 3, 4, 0, 0, out.view_2d_mut(2, 2).unwrap()))
        .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "matrix_read");
    assert!(
        message.contains("a 3 x 4 matrix needs more elements than the slice's 11"),
        "{message}"
    );
}

#[test]
fn a_matrix_view_checks_each_axis_not_the_offset() {
    let stream = simulator();
    let input = DeviceBuffer::to_device_sync(&[0u32; 12], &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(4, &stream).unwrap();
    // Column 4 of a 3 x 4 view (offsets 4..6, inside the slice).
    launch!(testing::matrix_read[(1, 1), (2, 2), stream](&input, 3, 4, 0, 3, out.view_2d_mut(2, 2).unwrap()))
        .unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "matrix_read");
    assert!(
        message.contains("matrix index out of bounds: the shape is 3 x 4 but the index is (0, 4)"),
        "{message}"
    );
}

#[test]
fn the_one_dimensional_witness_fails_in_a_two_dimensional_launch() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    // The kernel body's `thread_index()` (the general entry point's)...
    launch!(testing::one_dimensional_witness[(2, 2), (4, 4), stream](&mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "one_dimensional_witness");
    assert!(message.contains("use thread_index_2d()"), "{message}");
    // ... and the unshadowed one, called from a helper, which tests the shape.
    launch!(testing::witness_from_helper[(1, 2), 32, stream](&mut out)).unwrap();
    let (_, message) = failure(&stream);
    assert!(message.contains("use thread_index_2d()"), "{message}");
    // In one-dimensional launches both work.
    launch!(testing::one_dimensional_witness[2, 32, stream](&mut out)).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        (0..64).collect::<Vec<u32>>()
    );
    launch!(testing::witness_from_helper[2, 32, stream](&mut out)).unwrap();
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap(),
        (1..65).collect::<Vec<u32>>()
    );
}

#[test]
fn an_out_of_range_shared_read_names_kernel_block_and_thread() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::shared_read_at[1, 64, stream](64, &mut out)).unwrap();
    let (kernel, message) = failure(&stream);
    assert_eq!(kernel, "shared_read_at");
    assert!(
        message.starts_with("kernel `shared_read_at`, block (0, 0, 0), thread ("),
        "{message}"
    );
    assert!(
        message.contains("shared array index out of bounds: the len is 64 but the index is 64"),
        "{message}"
    );
    launch!(testing::shared_read_at[1, 64, stream](63, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![63; 64]);
}

#[test]
fn a_phase_barrier_never_pairs_with_sync_threads() {
    let stream = simulator();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    launch!(testing::phase_and_threads_barriers[1, 64, stream](false, &mut out)).unwrap();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), vec![2; 64]);
    // Half the threads at sync_threads(), half at Block::sync(): a hang on a
    // GPU, reported here.
    launch!(testing::phase_and_threads_barriers[1, 64, stream](true, &mut out)).unwrap();
    let (_, message) = failure(&stream);
    assert!(message.contains("wait at different barriers"), "{message}");
}
