//! The bulk tensor store (`gpu_device::tma::TensorMapOut`): block-tiled
//! copies (TMA load, scale in shared memory, TMA store) of ragged 3-D and
//! swizzled 2-D tensors, each block its own box, the store clipped at the
//! tensor's edges (the pads and whatever lies past the tensor never
//! written; rows are whole 16-byte chunks, as `TensorMapOut::new` requires:
//! an H100 wrote a ragged row's last chunk whole, into the pad); a box stored three times keeps the last; the launch tracked as
//! a write of the output's buffer across streams; the launcher's refusal of
//! an output map of another box. `TensorMapOut::new`'s refusals (an
//! aliasing layout, another element type, memory past the buffer) are its
//! unit tests (`runtime/src/memory/tensor_map_out.rs`).
//! Runs on the simulator, and on a GPU of compute capability 9.0.

use gpu_device::bf16;
use gpu_runtime::{
    launch, DeviceBuffer, Error, Stream, Swizzle, TensorMap, TensorMapLayout, TensorMapOut,
};
use gpu_test_kernels::tma_store::{
    tma_scale_2d_swizzled, tma_scale_3d, tma_store_thrice, STORE_BOX_2D, STORE_BOX_3D,
};

/// What the pads and the memory past the tensor hold: never written.
const UNTOUCHED: f32 = -7.0;

fn runs_sm_90a(stream: &Stream) -> bool {
    let device = stream.device();
    let cc = gpu_runtime::Device::get(device)
        .unwrap()
        .limits()
        .compute_capability;
    let runs = cc == (9, 0);
    if !runs {
        eprintln!("tma_store: device {device} is of compute capability {cc:?}, not 9.0: not run");
    }
    runs
}

/// A padded tensor's layout: extents `dims` (outermost first), each stride
/// the span inside it plus `pad`, rounded to 8 elements; its buffer
/// length (with `tail` elements past the last element).
struct Shape {
    dims: Vec<usize>,
    /// Outermost first; the last 1.
    strides: Vec<usize>,
    len: usize,
}

impl Shape {
    fn new(dims: &[usize], pad: usize, tail: usize) -> Shape {
        let rank = dims.len();
        let mut strides = vec![1; rank];
        for d in (0..rank - 1).rev() {
            strides[d] = (strides[d + 1] * dims[d + 1] + pad).next_multiple_of(8);
        }
        let len = strides[0] * dims[0] + tail;
        Shape {
            dims: dims.to_vec(),
            strides,
            len,
        }
    }

    fn layout<T: gpu_runtime::TensorElement>(
        &self,
        boxes: &[usize],
        s: Swizzle,
    ) -> TensorMapLayout {
        let dims: Vec<u64> = self.dims.iter().rev().map(|&d| d as u64).collect();
        let strides: Vec<u64> = self
            .strides
            .iter()
            .rev()
            .skip(1)
            .map(|&v| v as u64)
            .collect();
        let boxes: Vec<u32> = boxes.iter().rev().map(|&b| b as u32).collect();
        TensorMapLayout::tiled::<T>(&dims, &strides, &boxes, s).unwrap()
    }

    /// The offset of each element of the tensor, in its order.
    fn offsets(&self) -> Vec<usize> {
        let total: usize = self.dims.iter().product();
        (0..total)
            .map(|i| {
                let (mut rest, mut at) = (i, 0);
                for d in (0..self.dims.len()).rev() {
                    at += rest % self.dims[d] * self.strides[d];
                    rest /= self.dims[d];
                }
                at
            })
            .collect()
    }

    fn boxes(&self, boxes: &[usize]) -> u32 {
        self.dims
            .iter()
            .zip(boxes)
            .map(|(&d, &b)| d.div_ceil(b))
            .product::<usize>() as u32
    }
}

/// `input`'s elements `(i * 7) % 251 + 1`; pads 99 (never read: a pad read
/// would land in the output).
fn input_data(shape: &Shape) -> Vec<f32> {
    let mut data = vec![99.0; shape.len];
    for (i, at) in shape.offsets().into_iter().enumerate() {
        data[at] = ((i * 7) % 251 + 1) as f32;
    }
    data
}

/// The output expected: `factor` times each element, `UNTOUCHED` elsewhere.
fn scaled(shape: &Shape, input: &[f32], factor: f32) -> Vec<f32> {
    let mut want = vec![UNTOUCHED; shape.len];
    for at in shape.offsets() {
        want[at] = input[at] * factor;
    }
    want
}

fn compare(got: &[f32], want: &[f32], what: &str) {
    let wrong: Vec<(usize, f32, f32)> = (0..want.len())
        .filter(|&i| got[i] != want[i])
        .map(|i| (i, got[i], want[i]))
        .collect();
    if !wrong.is_empty() {
        panic!(
            "{what}: {} elements wrong of {}, (index, got, expected) first: {:?}",
            wrong.len(),
            want.len(),
            &wrong[..wrong.len().min(24)]
        );
    }
}

/// A ragged 3-D tensor copied and scaled box by box; blocks past the last
/// box store nothing; the pads and the 40 elements past the tensor keep
/// their value (the store clips).
#[test]
fn a_block_tiled_3d_copy_stores_each_box_clipped_at_the_edges() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let shape = Shape::new(&[3, 10, 24], 5, 40);
    let input = input_data(&shape);
    let source = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
    let map = TensorMap::new(&source, shape.layout::<f32>(&STORE_BOX_3D, Swizzle::None)).unwrap();
    let mut target = DeviceBuffer::to_device_sync(&vec![UNTOUCHED; shape.len], &stream).unwrap();
    let blocks = shape.boxes(&STORE_BOX_3D);
    assert_eq!(blocks, 8);
    {
        let mut out = TensorMapOut::new(
            &mut target,
            shape.layout::<f32>(&STORE_BOX_3D, Swizzle::None),
        )
        .unwrap();
        assert_eq!(out.box_counts(), [2, 2, 2]);
        launch!(tma_scale_3d[blocks + 3, 256, stream](&map, &mut out, 3.0)).unwrap();
    }
    let got = target.copy_to_host_sync(&stream).unwrap();
    compare(&got, &scaled(&shape, &input, 3.0), "3-D scaled copy");
}

/// 2-D bf16 boxes of 8 x 64 with the 128-byte swizzle, loaded and stored
/// (a 72-column matrix, its rows padded): each element scaled, the pad
/// between rows and past the end untouched.
#[test]
fn a_swizzled_2d_copy_stores_each_box_unswizzled() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let shape = Shape::new(&[19, 72], 2, 24);
    let input = input_data(&shape);
    let to_bf16 = |v: &[f32]| v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<bf16>>();
    let source = DeviceBuffer::to_device_sync(&to_bf16(&input), &stream).unwrap();
    let map = TensorMap::new(
        &source,
        shape.layout::<bf16>(&STORE_BOX_2D, Swizzle::Bytes128),
    )
    .unwrap();
    let mut target =
        DeviceBuffer::to_device_sync(&to_bf16(&vec![UNTOUCHED; shape.len]), &stream).unwrap();
    {
        let mut out = TensorMapOut::new(
            &mut target,
            shape.layout::<bf16>(&STORE_BOX_2D, Swizzle::Bytes128),
        )
        .unwrap();
        let blocks = shape.boxes(&STORE_BOX_2D);
        launch!(tma_scale_2d_swizzled[blocks, 128, stream](&map, &mut out, 2.0)).unwrap();
    }
    let got: Vec<f32> = target
        .copy_to_host_sync(&stream)
        .unwrap()
        .iter()
        .map(|v| v.to_f32())
        .collect();
    compare(
        &got,
        &scaled(&shape, &input, 2.0),
        "swizzled 2-D scaled copy",
    );
}

/// Each block's box stored three times in two scopes, in a 2-D grid of
/// blocks: the last store's values stay, in every box, and nothing past
/// the 40 x 52 matrix is written.
#[test]
fn a_box_stored_three_times_keeps_the_last() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let shape = Shape::new(&[40, 52], 6, 8);
    let mut target = DeviceBuffer::to_device_sync(&vec![UNTOUCHED; shape.len], &stream).unwrap();
    {
        let mut out =
            TensorMapOut::new(&mut target, shape.layout::<f32>(&[16, 32], Swizzle::None)).unwrap();
        // 2 x 3 boxes; a grid of 3 x 2 blocks (linear index x + 3 y).
        launch!(tma_store_thrice[(3, 2), 128, stream](&mut out)).unwrap();
    }
    let got = target.copy_to_host_sync(&stream).unwrap();
    let mut want = vec![UNTOUCHED; shape.len];
    for y in 0..40 {
        for x in 0..52 {
            let b = (y / 16) * 2 + x / 32;
            want[y * shape.strides[0] + x] = (1000 * b + 32 * (y % 16) + x % 32) as f32;
        }
    }
    compare(&got, &want, "a box stored three times");
}

/// The kernel's stores are tracked as a write of the output's buffer: a
/// copy into it queued on another stream before the launch lands before
/// the stores (which overwrite it), and a read queued on another stream
/// after the launch sees them.
#[test]
fn stores_are_ordered_with_other_streams_work_on_the_buffer() {
    let writer = Stream::new().unwrap();
    let kernel = Stream::new().unwrap();
    if !runs_sm_90a(&kernel) {
        return;
    }
    let shape = Shape::new(&[3, 10, 24], 5, 40);
    let input = input_data(&shape);
    let source = DeviceBuffer::to_device_sync(&input, &kernel).unwrap();
    let map = TensorMap::new(&source, shape.layout::<f32>(&STORE_BOX_3D, Swizzle::None)).unwrap();
    let mut target = DeviceBuffer::<f32>::zeroed_on(shape.len, &writer).unwrap();
    target
        .copy_from_host(&vec![UNTOUCHED; shape.len], &writer)
        .unwrap();
    {
        let mut out = TensorMapOut::new(
            &mut target,
            shape.layout::<f32>(&STORE_BOX_3D, Swizzle::None),
        )
        .unwrap();
        launch!(tma_scale_3d[8, 256, kernel](&map, &mut out, 5.0)).unwrap();
    }
    let got = target.copy_to_host_sync(&writer).unwrap();
    compare(&got, &scaled(&shape, &input, 5.0), "read on another stream");
}

fn refusal(result: gpu_runtime::Result<()>) -> String {
    match result {
        Err(Error::InvalidLaunch { kernel, reason }) => format!("{kernel}: {reason}"),
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
}

/// An output map whose box is not the parameter type's is refused at
/// launch, naming the parameter: the kernel's store tile is of its type.
#[test]
fn an_output_map_of_another_box_is_refused_at_launch() {
    let stream = Stream::new().unwrap();
    let shape = Shape::new(&[3, 10, 24], 5, 0);
    let source = DeviceBuffer::to_device_sync(&input_data(&shape), &stream).unwrap();
    let map = TensorMap::new(&source, shape.layout::<f32>(&STORE_BOX_3D, Swizzle::None)).unwrap();
    let mut target = DeviceBuffer::<f32>::zeroed_on(shape.len, &stream).unwrap();
    let mut out =
        TensorMapOut::new(&mut target, shape.layout::<f32>(&[1, 8, 16], Swizzle::None)).unwrap();
    let message = refusal(launch!(tma_scale_3d[8, 256, stream](&map, &mut out, 1.0)));
    assert!(
        message.starts_with("tma_scale_3d")
            && message.contains(
                "argument `out` is a tensor map of 3 dimensions with a box of [16, 8, 1]"
            )
            && message.contains("takes 3 dimensions with a box of [16, 8, 2]"),
        "{message}"
    );
}
