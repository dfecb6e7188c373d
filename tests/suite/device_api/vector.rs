//! `gpu_device::vector::read_run_unaligned` launched: every start of
//! sub-slices of a device buffer that begin at every element offset of a
//! 16-byte line (sub-slices not 16-byte aligned) and end at every one,
//! for `u8`, `u16`, `bf16` and `f32`, against plain indexing (`None`
//! exactly where the run leaves the sub-slice). On the simulator where
//! there is no GPU, on the GPU otherwise. (The device crate's unit test
//! reads slices at the edges of a page between inaccessible ones.)

use gpu_device::half::bf16;
use gpu_runtime::bytemuck::{cast_slice, Pod};
use gpu_runtime::{launch, DeviceBuffer, DeviceCopy, Stream};
use gpu_test_kernels::vector::{self as k, RUNS_SOURCE_LEN, RUNS_STARTS};

/// The source: distinct non-zero bytes.
fn source<T: Pod>() -> Vec<T> {
    let bytes: Vec<u8> = (0..RUNS_SOURCE_LEN * size_of::<T>())
        .map(|i| (i % 251) as u8 + 1)
        .collect();
    cast_slice(&bytes).to_vec()
}

/// Checks what a launch wrote for sub-slices `src[skip .. len - tail]`
/// (tail = block index), `N` elements a start, against indexing.
fn check<T: Pod, const N: usize>(src: &[T], skip: usize, runs: &[T], found: &[u32]) {
    let tails = 16 / size_of::<T>();
    for tail in 0..tails {
        let end = src.len() - tail;
        let slice = &src[skip.min(end)..end];
        for start in 0..RUNS_STARTS {
            let g = tail * RUNS_STARTS + start;
            let want = slice.get(start..start + N);
            let at = format!(
                "{}: src[{skip}..{end}], start {start}",
                std::any::type_name::<T>()
            );
            assert_eq!(found[g], u32::from(want.is_some()), "{at}: found");
            let got: &[u8] = cast_slice(&runs[g * N..(g + 1) * N]);
            match want {
                Some(want) => assert_eq!(got, cast_slice::<T, u8>(want), "{at}"),
                None => assert!(got.iter().all(|&b| b == 0), "{at}: zeros for None"),
            }
        }
    }
}

/// Runs `launch` (one block a tail, one thread a start) for every skip of
/// a 16-byte line, and checks each.
fn every_offset<T: Pod + DeviceCopy, const N: usize>(
    launch: impl Fn(&DeviceBuffer<T>, usize, &mut DeviceBuffer<T>, &mut DeviceBuffer<u32>, &Stream),
) {
    let stream = Stream::new().unwrap();
    let src = source::<T>();
    let input = DeviceBuffer::to_device_sync(&src, &stream).unwrap();
    let tails = 16 / size_of::<T>();
    for skip in 0..16 / size_of::<T>() {
        let mut runs = DeviceBuffer::<T>::zeroed_on(tails * RUNS_STARTS * N, &stream).unwrap();
        let mut found = DeviceBuffer::<u32>::zeroed_on(tails * RUNS_STARTS, &stream).unwrap();
        launch(&input, skip, &mut runs, &mut found, &stream);
        let runs = runs.copy_to_host_sync(&stream).unwrap();
        let found = found.copy_to_host_sync(&stream).unwrap();
        check::<T, N>(&src, skip, &runs, &found);
    }
}

#[test]
fn unaligned_runs_of_u8_read_what_indexing_reads() {
    every_offset::<u8, 16>(|src, skip, runs, found, s| {
        launch!(k::unaligned_runs_u8[16, RUNS_STARTS, s](src, skip, runs, found)).unwrap()
    });
}

#[test]
fn unaligned_runs_of_u16_read_what_indexing_reads() {
    every_offset::<u16, 8>(|src, skip, runs, found, s| {
        launch!(k::unaligned_runs_u16[8, RUNS_STARTS, s](src, skip, runs, found)).unwrap()
    });
}

#[test]
fn unaligned_runs_of_bf16_read_what_indexing_reads() {
    every_offset::<bf16, 8>(|src, skip, runs, found, s| {
        launch!(k::unaligned_runs_bf16[8, RUNS_STARTS, s](src, skip, runs, found)).unwrap()
    });
}

#[test]
fn unaligned_runs_of_f32_read_what_indexing_reads() {
    every_offset::<f32, 4>(|src, skip, runs, found, s| {
        launch!(k::unaligned_runs_f32[4, RUNS_STARTS, s](src, skip, runs, found)).unwrap()
    });
}
