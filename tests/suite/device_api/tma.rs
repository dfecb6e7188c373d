//! The bulk tensor copy (`gpu_device::tma`, TMA): a tensor map as a kernel
//! parameter, boxes of a 130 x 70 bf16 matrix (rows 72 apart) copied into
//! 64 x 64 shared tiles at the ragged edges, without and with the 128-byte
//! swizzle, landing as on the GPU (clipped, zeros past the edges, the pad
//! between rows never read); the launcher's checks of the map against the
//! parameter's type and device; the buffer's tracking across streams;
//! maps made where dropped maps of other boxes were (each copied with its
//! own box, not a descriptor the copy engine cached); two tiles loaded in
//! crossed orders, each copy waiting for its own tile's readers; one
//! tile's scopes one after the other (in a loop, many blocks, several
//! launches), and a scope nested in its own refused. A map of
//! a dropped buffer does not compile
//! (`tests/ui/runtime_api/tensor_map_of_dropped_buffer.rs`); a tile is read
//! only through `Loading::wait`'s `Landed`, and loads only from a map of
//! its own type (no ui case yet).
//! Runs on the simulator, and on a GPU of compute capability 9.0 (the
//! kernels are `sm_90a`'s; elsewhere the test says so and returns).

use crate::common;

use common::faults::{in_own_simulator_process, next_device};
use gpu_device::bf16;
use gpu_runtime::{launch, DeviceBuffer, Error, Stream, Swizzle, TensorMap, BACKEND_ENV};
use gpu_test_kernels::tma::{
    tma_box_f32, tma_boxes, tma_boxes_swizzled, tma_tile_in_a_loop, tma_tile_nested,
    tma_two_tiles_crossed, BOX, CROSSED_ROWS, NOT_ZERO, TMA_THREADS,
};

const ROWS: usize = 130;
const COLS: usize = 70;
/// Rows 144 bytes apart (a multiple of 16); the pad holds -1.
const LD: usize = 72;
const BOXES_PER_ROW: usize = COLS.div_ceil(BOX);
const BOXES: usize = ROWS.div_ceil(BOX) * BOXES_PER_ROW;

/// Whether the device runs the sm_90a kernels; says so when it does not.
fn runs_sm_90a(stream: &Stream) -> bool {
    let device = stream.device();
    let cc = gpu_runtime::Device::get(device)
        .unwrap()
        .limits()
        .compute_capability;
    let runs = cc == (9, 0);
    if !runs {
        eprintln!("tma: device {device} is of compute capability {cc:?}, not 9.0: not run");
    }
    runs
}

/// Element (r, c): an integer below 251 (exact in bf16), distinct for
/// neighbours; `seed` shifts it; the pad -1.
fn matrix(seed: usize) -> Vec<bf16> {
    (0..ROWS * LD)
        .map(|i| {
            let (r, c) = (i / LD, i % LD);
            let v = if c < COLS {
                ((r * 7 + c * 3 + seed) % 251) as f32
            } else {
                -1.0
            };
            bf16::from_f32(v)
        })
        .collect()
}

/// What `tma_boxes` writes: box after box, each 64 x 64 row-major, zeros
/// past the matrix's edges.
fn expected(data: &[bf16]) -> Vec<f32> {
    let mut out = vec![0.0; BOXES * BOX * BOX];
    for b in 0..BOXES {
        let (row0, col0) = (b / BOXES_PER_ROW * BOX, b % BOXES_PER_ROW * BOX);
        for r in 0..BOX {
            for c in 0..BOX {
                let (y, x) = (row0 + r, col0 + c);
                if y < ROWS && x < COLS {
                    out[b * BOX * BOX + r * BOX + c] = data[y * LD + x].to_f32();
                }
            }
        }
    }
    out
}

fn boxes(stream: &Stream, buffer: &DeviceBuffer<bf16>, swizzle: Swizzle) -> Vec<f32> {
    let map =
        TensorMap::matrix(buffer, (ROWS, COLS, LD), (BOX as u32, BOX as u32), swizzle).unwrap();
    let mut out = DeviceBuffer::<bf16>::zeroed_on(BOXES * BOX * BOX, stream).unwrap();
    let blocks = (BOXES * 4) as u32;
    let per_row = BOXES_PER_ROW as u32;
    match swizzle {
        Swizzle::None => launch!(tma_boxes[blocks, TMA_THREADS, stream](&map, per_row, &mut out)),
        _ => launch!(tma_boxes_swizzled[blocks, TMA_THREADS, stream](&map, per_row, &mut out)),
    }
    .unwrap();
    let got = out.copy_to_host_sync(stream).unwrap();
    got.iter().map(|v| v.to_f32()).collect()
}

fn check(got: &[f32], want: &[f32], what: &str) {
    assert!(
        !got.contains(&NOT_ZERO),
        "{what}: a box past the edge did not land as zeros"
    );
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        let (b, r, c) = (i / (BOX * BOX), i / BOX % BOX, i % BOX);
        panic!(
            "{what}: box {b} element ({r}, {c}) is {}, expected {}",
            got[i], want[i]
        );
    }
}

#[test]
fn boxes_land_clipped_and_zero_filled_at_ragged_edges() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let data = matrix(0);
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    let want = expected(&data);
    check(&boxes(&stream, &buffer, Swizzle::None), &want, "no swizzle");
    check(
        &boxes(&stream, &buffer, Swizzle::Bytes128),
        &want,
        "128-byte swizzle",
    );
}

/// A 16 x 32 f32 box at negative and past-the-end coordinates: clipped on
/// every side. (Columns are multiples of 4: a box starts a multiple of 16
/// bytes into the row, see the test after this one.)
#[test]
fn boxes_are_clipped_on_every_side() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let (rows, cols) = (20usize, 40usize);
    let data: Vec<f32> = (0..rows * cols).map(|i| i as f32 + 1.0).collect();
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    let map = TensorMap::matrix(&buffer, (rows, cols, cols), (16, 32), Swizzle::None).unwrap();
    for (row, col) in [
        (-5i32, -8i32),
        (10, 20),
        (0, 0),
        (19, 36),
        (-16, 0),
        (100, 100),
    ] {
        let mut out = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
        launch!(tma_box_f32[1, 512, stream](&map, row, col, &mut out)).unwrap();
        check_f32_box(
            &out.copy_to_host_sync(&stream).unwrap(),
            &data,
            (rows, cols),
            (row, col),
        );
    }
}

/// A box whose first column is not a multiple of 16 bytes into the row:
/// the copy engine faults on it (on an H100, columns 1, 2, 3, -7 and 39 of
/// a 40-column f32 map ended the kernel with `CUDA_ERROR_ILLEGAL_INSTRUCTION`,
/// in CUDA C as here), so `load` refuses it before the copy with an assertion
/// naming the column and the rule, on both backends. A failed launch ends
/// the device: in a process of its own.
#[test]
fn a_box_starting_off_a_16_byte_column_is_refused_naming_the_rule() {
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let (rows, cols) = (20usize, 40usize);
    let data: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    let map = TensorMap::matrix(&buffer, (rows, cols, cols), (16, 32), Swizzle::None).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
    launch!(tma_box_f32[1, 512, stream](&map, 2, -7, &mut out)).unwrap();
    let report = common::faults::failure(&stream);
    assert!(report.starts_with("tma_box_f32: "), "{report}");
    // The simulator names the rule; a GPU traps, as its copy engine does.
    if gpu_runtime::backend() == gpu_runtime::Backend::Simulator {
        assert!(
            report.contains("first column -7 lies -28 bytes into the row")
                && report.contains("a multiple of 4 for elements of 4 bytes"),
            "{report}"
        );
    }
}

/// Checks `tma_box_f32`'s output for the box at (`row`, `col`) of the
/// `rows x cols` matrix `data`.
fn check_f32_box(got: &[f32], data: &[f32], (rows, cols): (usize, usize), (row, col): (i32, i32)) {
    for (t, &v) in got.iter().enumerate() {
        let (y, x) = (row as i64 + (t / 32) as i64, col as i64 + (t % 32) as i64);
        let inside = (0..rows as i64).contains(&y) && (0..cols as i64).contains(&x);
        let want = if inside {
            data[y as usize * cols + x as usize]
        } else {
            0.0
        };
        assert_eq!(
            v,
            want,
            "box at ({row}, {col}), element ({}, {})",
            t / 32,
            t % 32
        );
    }
}

/// Maps of other boxes made and dropped in turn, each copied through: the
/// memory pool gives a dropped map's device copy to the next map, and
/// each kernel copies with its own map's box, not with a descriptor the
/// copy engine cached for that address (the H200's illegal instruction in
/// `tma_box_f32`, a 2048-byte box after 8192-byte ones; the kernels now
/// acquire their maps for the tensor-map proxy).
#[test]
fn a_map_made_where_a_dropped_map_was_copies_its_own_box() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let wide = matrix(3);
    let wide_buffer = DeviceBuffer::to_device_sync(&wide, &stream).unwrap();
    let want = expected(&wide);
    let (rows, cols) = (20usize, 40usize);
    let data: Vec<f32> = (0..rows * cols).map(|i| i as f32 + 1.0).collect();
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    for round in 0..3 {
        check(
            &boxes(&stream, &wide_buffer, Swizzle::None),
            &want,
            &format!("round {round}, the bf16 map"),
        );
        let map = TensorMap::matrix(&buffer, (rows, cols, cols), (16, 32), Swizzle::None).unwrap();
        let mut out = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
        launch!(tma_box_f32[1, 512, stream](&map, 2, 4, &mut out)).unwrap();
        check_f32_box(
            &out.copy_to_host_sync(&stream).unwrap(),
            &data,
            (rows, cols),
            (2, 4),
        );
        drop(map);
        check(
            &boxes(&stream, &wide_buffer, Swizzle::Bytes128),
            &want,
            &format!("round {round}, the swizzled bf16 map"),
        );
    }
}

/// Two tiles, the block's halves asking for their next boxes in crossed
/// orders, the odd threads reading tile A's first box after asking for
/// B's next one: every value is its box's. Each copy waits for every
/// thread's load of its own tile (the review's attack: with one block
/// barrier for every tile's loads, the odd threads' load of B let A's next
/// copy land under their read).
#[test]
fn loads_of_two_tiles_in_crossed_orders_wait_for_their_own_tiles_readers() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let data: Vec<f32> = (0..CROSSED_ROWS * 32).map(|i| i as f32 + 1.0).collect();
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    let map = TensorMap::matrix(&buffer, (CROSSED_ROWS, 32, 32), (16, 32), Swizzle::None).unwrap();
    let mut first = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
    let mut second = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
    let mut third = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
    launch!(tma_two_tiles_crossed[1, 512, stream](
        &map,
        &mut first,
        &mut second,
        &mut third
    ))
    .unwrap();
    for (what, out, row) in [
        ("tile A's first box, read after B's next load", &first, 0),
        ("tile A's second box", &second, 32),
        ("tile B's second box", &third, 48),
    ] {
        let got = out.copy_to_host_sync(&stream).unwrap();
        if let Some(t) = (0..512).find(|&t| got[t] != data[(row + t / 32) * 32 + t % 32]) {
            panic!(
                "{what}: thread {t} read {}, expected {}",
                got[t],
                data[(row + t / 32) * 32 + t % 32]
            );
        }
    }
}

/// One `tma_tile!`'s `with` in a loop, one scope after the other: each
/// round initialises the tile's barriers afresh after the previous scope
/// ended (its copy lands on phase 0 again) and reads the box it copied; in
/// many blocks and several launches, so that blocks find the tags earlier
/// blocks left (never taken for live barriers).
#[test]
fn a_tiles_scopes_one_after_the_other_each_read_their_box() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let data: Vec<f32> = (0..CROSSED_ROWS * 32).map(|i| i as f32 + 1.0).collect();
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    let map = TensorMap::matrix(&buffer, (CROSSED_ROWS, 32, 32), (16, 32), Swizzle::None).unwrap();
    let (blocks, rounds) = (40u32, 6u32);
    let want: Vec<f32> = (0..512)
        .map(|t| {
            (0..rounds as usize)
                .map(|k| (k + 1) as f32 * data[(16 * (k % 4) + t / 32) * 32 + t % 32])
                .sum()
        })
        .collect();
    for round in 0..3 {
        let mut out = DeviceBuffer::<f32>::zeroed_on(512 * blocks as usize, &stream).unwrap();
        launch!(tma_tile_in_a_loop[blocks, 512, stream](&map, rounds, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i % 512]) {
            panic!(
                "launch {round}: thread {i} wrote {}, expected {}",
                got[i],
                want[i % 512]
            );
        }
    }
}

/// A `with` of one `tma_tile!` nested in its own scope (a closure that
/// makes the tile, called inside its `with`) would initialise the outer
/// tile's barriers again under its handle: refused in every thread,
/// naming the problem on the simulator (a trap on a GPU). A failed launch
/// ends the device: in a process of its own.
#[test]
fn a_tiles_scope_nested_in_its_own_is_refused() {
    if !common::faults::in_own_process(&[]) {
        return;
    }
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let data: Vec<f32> = (0..CROSSED_ROWS * 32).map(|i| i as f32 + 1.0).collect();
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    let map = TensorMap::matrix(&buffer, (CROSSED_ROWS, 32, 32), (16, 32), Swizzle::None).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(512, &stream).unwrap();
    launch!(tma_tile_nested[1, 512, stream](&map, &mut out)).unwrap();
    let report = common::faults::failure(&stream);
    assert!(report.starts_with("tma_tile_nested: "), "{report}");
    if gpu_runtime::backend() == gpu_runtime::Backend::Simulator {
        assert!(
            report.contains("MBarriers::init: these mbarriers are initialised already in this block and their handles may be in use"),
            "{report}"
        );
    }
}

fn refusal(result: gpu_runtime::Result<()>) -> String {
    match result {
        Err(Error::InvalidLaunch { kernel, reason }) => format!("{kernel}: {reason}"),
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
}

/// A map whose box or swizzle is not the parameter type's, or of another
/// rank, is refused at launch, naming the parameter: the kernel's tiles
/// are of the type's box.
#[test]
fn a_map_of_another_box_or_swizzle_is_refused_at_launch() {
    let stream = Stream::new().unwrap();
    let data = matrix(0);
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    let mut out = DeviceBuffer::<bf16>::zeroed_on(BOXES * BOX * BOX, &stream).unwrap();
    let short = TensorMap::matrix(&buffer, (ROWS, COLS, LD), (32, 64), Swizzle::None).unwrap();
    let message = refusal(launch!(tma_boxes[4, TMA_THREADS, stream](&short, 2, &mut out)));
    assert!(
        message.starts_with("tma_boxes")
            && message.contains("argument `map` is a tensor map of 2 dimensions with a box of [64, 32] elements (innermost first) and None")
            && message.contains("takes 2 dimensions with a box of [64, 64] and swizzle mode 0"),
        "{message}"
    );
    let swizzled =
        TensorMap::matrix(&buffer, (ROWS, COLS, LD), (64, 64), Swizzle::Bytes128).unwrap();
    let message = refusal(launch!(tma_boxes[4, TMA_THREADS, stream](&swizzled, 2, &mut out)));
    assert!(
        message.contains("with a box of [64, 64] elements (innermost first) and Bytes128"),
        "{message}"
    );
    let plain = TensorMap::matrix(&buffer, (ROWS, COLS, LD), (64, 64), Swizzle::None).unwrap();
    let message = refusal(launch!(tma_boxes_swizzled[4, TMA_THREADS, stream](&plain, 2, &mut out)));
    assert!(message.contains("swizzle mode 3"), "{message}");
    let layout = gpu_runtime::TensorMapLayout::tiled::<bf16>(
        &[(ROWS * LD) as u64],
        &[],
        &[64],
        Swizzle::None,
    )
    .unwrap();
    let flat = TensorMap::new(&buffer, layout).unwrap();
    let message = refusal(launch!(tma_boxes[4, TMA_THREADS, stream](&flat, 2, &mut out)));
    assert!(
        message.contains("a tensor map of 1 dimensions"),
        "{message}"
    );
}

/// A map of a buffer on another device than the launch's is refused,
/// naming both devices (several simulated devices, in a process of its
/// own).
#[test]
fn a_map_of_another_devices_buffer_is_refused_at_launch() {
    if !in_own_simulator_process() {
        return;
    }
    std::env::set_var(BACKEND_ENV, "simulator");
    let here = Stream::new().unwrap();
    let there = next_device();
    let buffer = DeviceBuffer::to_device_sync(&matrix(0), &there).unwrap();
    let map = TensorMap::matrix(&buffer, (ROWS, COLS, LD), (64, 64), Swizzle::None).unwrap();
    let mut out = DeviceBuffer::<bf16>::zeroed_on(BOXES * BOX * BOX, &here).unwrap();
    let message = refusal(launch!(tma_boxes[4, TMA_THREADS, here](&map, 2, &mut out)));
    assert!(
        message.contains(&format!(
            "argument `map` is a tensor map of a buffer on device {}, and the launch is on device {}",
            there.device(),
            here.device()
        )),
        "{message}"
    );
}

/// The kernel's reads through the map are tracked as reads of the buffer:
/// a copy into the buffer queued on another stream before the launch is
/// waited for, and one queued after it waits for the kernel.
#[test]
fn writes_on_other_streams_are_ordered_around_the_kernels_reads() {
    let writer = Stream::new().unwrap();
    let reader = Stream::new().unwrap();
    if !runs_sm_90a(&reader) {
        return;
    }
    let (first, second) = (matrix(1), matrix(2));
    let mut buffer = DeviceBuffer::<bf16>::zeroed_on(ROWS * LD, &writer).unwrap();
    buffer.copy_from_host(&first, &writer).unwrap();
    let mut out = DeviceBuffer::<bf16>::zeroed_on(BOXES * BOX * BOX, &reader).unwrap();
    {
        let map = TensorMap::matrix(&buffer, (ROWS, COLS, LD), (64, 64), Swizzle::None).unwrap();
        let blocks = (BOXES * 4) as u32;
        launch!(tma_boxes[blocks, TMA_THREADS, reader](&map, BOXES_PER_ROW as u32, &mut out))
            .unwrap();
    }
    buffer.copy_from_host(&second, &writer).unwrap();
    let got: Vec<f32> = out
        .copy_to_host_sync(&reader)
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect();
    check(
        &got,
        &expected(&first),
        "the kernel between two copies on another stream",
    );
    assert_eq!(buffer.copy_to_host_sync(&writer).unwrap(), second);
}
