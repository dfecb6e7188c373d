//! The bulk tensor copy beyond 2-D (`gpu_device::tma::TensorMapNd`): boxes
//! of 1, 3 and 5 dimensions copied from padded tensors into shared tiles at
//! their ragged edges (clipped on every side, zeros past the edges, the
//! pads never read), a 3-D box with the 128-byte swizzle; the launcher's
//! refusal of a map of another rank or box. The layout's own refusals (a
//! box of 257, a stride off 16 bytes, ...) are `TensorMapLayout`'s unit
//! tests (`runtime/src/memory/tensor_map.rs`), and a map of another element
//! type does not compile (the launcher's `M: TensorMapShape<Element = T>`).
//! Runs on the simulator, and on a GPU of compute capability 9.0.

use gpu_device::bf16;
use gpu_runtime::{launch, DeviceBuffer, Error, Stream, Swizzle, TensorMap, TensorMapLayout};
use gpu_test_kernels::tma_nd::{
    tma_box_1d, tma_box_3d, tma_box_3d_swizzled, tma_box_5d, BOX_1D, BOX_3D, BOX_3D_SWIZZLED,
    BOX_5D,
};

/// Whether the device runs the sm_90a kernels; says so when it does not.
fn runs_sm_90a(stream: &Stream) -> bool {
    let device = stream.device();
    let cc = gpu_runtime::Device::get(device)
        .unwrap()
        .limits()
        .compute_capability;
    let runs = cc == (9, 0);
    if !runs {
        eprintln!("tma_nd: device {device} is of compute capability {cc:?}, not 9.0: not run");
    }
    runs
}

/// A tensor of extents `dims` (outermost first) with `pad` elements after
/// each innermost row and each plane (so every stride but the first has a
/// gap, which holds -1); element `i` of the unpadded order holds
/// `(i * 7 + seed) % 251 + 1` (exact in bf16). Returns the data and the
/// strides in elements, innermost first, the first (1) left out.
struct Padded {
    data: Vec<f32>,
    dims: Vec<usize>,
    /// Strides in elements, outermost first (the last is 1).
    strides: Vec<usize>,
}

impl Padded {
    fn new(dims: &[usize], pad: usize, seed: usize) -> Padded {
        let rank = dims.len();
        let mut strides = vec![1; rank];
        for d in (0..rank - 1).rev() {
            // Row and plane strides padded; kept a multiple of 4 elements
            // (16 bytes of f32, 8 of bf16: the layout then rounds nothing).
            strides[d] = (strides[d + 1] * dims[d + 1] + pad).next_multiple_of(8);
        }
        let len = strides[0] * dims[0];
        let mut data = vec![-1.0; len];
        let total: usize = dims.iter().product();
        for i in 0..total {
            let (mut rest, mut at) = (i, 0);
            for d in (0..rank).rev() {
                at += rest % dims[d] * strides[d];
                rest /= dims[d];
            }
            data[at] = ((i * 7 + seed) % 251 + 1) as f32;
        }
        Padded {
            data,
            dims: dims.to_vec(),
            strides,
        }
    }

    /// The layout of boxes `boxes` (outermost first) with `swizzle`.
    fn layout<T: gpu_runtime::TensorElement>(
        &self,
        boxes: &[usize],
        swizzle: Swizzle,
    ) -> TensorMapLayout {
        let dims: Vec<u64> = self.dims.iter().rev().map(|&d| d as u64).collect();
        let strides: Vec<u64> = self
            .strides
            .iter()
            .rev()
            .skip(1)
            .map(|&s| s as u64)
            .collect();
        let boxes: Vec<u32> = boxes.iter().rev().map(|&b| b as u32).collect();
        TensorMapLayout::tiled::<T>(&dims, &strides, &boxes, swizzle).unwrap()
    }

    /// The box of `boxes` at `at` (both outermost first), element after
    /// element, outermost slowest: zeros past the edges.
    fn expected(&self, boxes: &[usize], at: &[i32]) -> Vec<f32> {
        let count: usize = boxes.iter().product();
        (0..count)
            .map(|linear| {
                let (mut rest, mut offset) = (linear, 0usize);
                let mut inside = true;
                for d in (0..boxes.len()).rev() {
                    let g = i64::from(at[d]) + (rest % boxes[d]) as i64;
                    rest /= boxes[d];
                    if (0..self.dims[d] as i64).contains(&g) {
                        offset += g as usize * self.strides[d];
                    } else {
                        inside = false;
                    }
                }
                if inside {
                    self.data[offset]
                } else {
                    0.0
                }
            })
            .collect()
    }
}

fn compare(got: &[f32], want: &[f32], what: &str) {
    if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
        panic!("{what}: element {i} is {}, expected {}", got[i], want[i]);
    }
}

#[test]
fn a_1d_box_lands_clipped_and_zero_filled() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let t = Padded::new(&[100], 0, 1);
    let buffer = DeviceBuffer::to_device_sync(&t.data, &stream).unwrap();
    let map = TensorMap::new(&buffer, t.layout::<f32>(&[BOX_1D], Swizzle::None)).unwrap();
    for x in [0, 64, -32, 40, 96, 200] {
        let mut out = DeviceBuffer::<f32>::zeroed_on(BOX_1D, &stream).unwrap();
        launch!(tma_box_1d[1, BOX_1D as u32, stream](&map, x, &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        compare(
            &got,
            &t.expected(&[BOX_1D], &[x]),
            &format!("1-D box at {x}"),
        );
    }
}

#[test]
fn a_3d_box_lands_clipped_on_every_side() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let t = Padded::new(&[3, 10, 21], 5, 2);
    let buffer = DeviceBuffer::to_device_sync(&t.data, &stream).unwrap();
    let map = TensorMap::new(&buffer, t.layout::<f32>(&BOX_3D, Swizzle::None)).unwrap();
    for at in [
        [0, 0, 0],
        [2, 6, 12],
        [-1, -4, -8],
        [1, 9, 16],
        [2, 3, 20],
        [3, 0, 0],
        [-2, -8, -16],
    ] {
        let mut out = DeviceBuffer::<f32>::zeroed_on(256, &stream).unwrap();
        launch!(tma_box_3d[1, 256, stream](&map, at[0], at[1], at[2], &mut out)).unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        compare(
            &got,
            &t.expected(&BOX_3D, &at),
            &format!("3-D box at {at:?}"),
        );
    }
}

#[test]
fn a_swizzled_3d_box_lands_as_the_copy_engine_swizzles_it() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let t = Padded::new(&[3, 10, 70], 2, 3);
    let data: Vec<bf16> = t.data.iter().map(|&v| bf16::from_f32(v)).collect();
    let buffer = DeviceBuffer::to_device_sync(&data, &stream).unwrap();
    let map = TensorMap::new(
        &buffer,
        t.layout::<bf16>(&BOX_3D_SWIZZLED, Swizzle::Bytes128),
    )
    .unwrap();
    for at in [[0, 0, 0], [1, 4, 64], [2, -3, 8]] {
        let mut out = DeviceBuffer::<bf16>::zeroed_on(1024, &stream).unwrap();
        launch!(tma_box_3d_swizzled[1, 1024, stream](&map, at[0], at[1], at[2], &mut out)).unwrap();
        let got: Vec<f32> = out
            .copy_to_host_sync(&stream)
            .unwrap()
            .iter()
            .map(|v| v.to_f32())
            .collect();
        compare(
            &got,
            &t.expected(&BOX_3D_SWIZZLED, &at),
            &format!("swizzled 3-D box at {at:?}"),
        );
    }
}

#[test]
fn a_5d_box_lands_clipped_on_every_side() {
    let stream = Stream::new().unwrap();
    if !runs_sm_90a(&stream) {
        return;
    }
    let t = Padded::new(&[3, 3, 3, 5, 12], 4, 4);
    let buffer = DeviceBuffer::to_device_sync(&t.data, &stream).unwrap();
    let map = TensorMap::new(&buffer, t.layout::<f32>(&BOX_5D, Swizzle::None)).unwrap();
    for at in [
        [0, 0, 0, 0, 0],
        [2, 1, 2, 4, 8],
        [-1, 2, -1, -2, -4],
        [1, 1, 1, 2, 4],
    ] {
        let mut out = DeviceBuffer::<f32>::zeroed_on(256, &stream).unwrap();
        launch!(tma_box_5d[1, 256, stream](&map, at[0], at[1], at[2], at[3], at[4], &mut out))
            .unwrap();
        let got = out.copy_to_host_sync(&stream).unwrap();
        compare(
            &got,
            &t.expected(&BOX_5D, &at),
            &format!("5-D box at {at:?}"),
        );
    }
}

fn refusal(result: gpu_runtime::Result<()>) -> String {
    match result {
        Err(Error::InvalidLaunch { kernel, reason }) => format!("{kernel}: {reason}"),
        other => panic!("expected InvalidLaunch, got {other:?}"),
    }
}

/// A map whose rank or box is not the parameter type's is refused at
/// launch, naming the parameter, the map's box and the type's.
#[test]
fn a_map_of_another_rank_or_box_is_refused_at_launch() {
    let stream = Stream::new().unwrap();
    let t = Padded::new(&[3, 10, 21], 5, 2);
    let buffer = DeviceBuffer::to_device_sync(&t.data, &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(256, &stream).unwrap();
    let other_box = TensorMap::new(&buffer, t.layout::<f32>(&[2, 16, 8], Swizzle::None)).unwrap();
    let message = refusal(launch!(tma_box_3d[1, 256, stream](&other_box, 0, 0, 0, &mut out)));
    assert!(
        message.starts_with("tma_box_3d")
            && message.contains("argument `map` is a tensor map of 3 dimensions with a box of [8, 16, 2] elements (innermost first)")
            && message.contains("takes 3 dimensions with a box of [16, 8, 2]"),
        "{message}"
    );
    let five = Padded::new(&[3, 3, 3, 5, 12], 4, 4);
    let five_buffer = DeviceBuffer::to_device_sync(&five.data, &stream).unwrap();
    let map5 = TensorMap::new(&five_buffer, five.layout::<f32>(&BOX_5D, Swizzle::None)).unwrap();
    let message = refusal(launch!(tma_box_3d[1, 256, stream](&map5, 0, 0, 0, &mut out)));
    assert!(
        message.contains("is a tensor map of 5 dimensions")
            && message.contains("takes 3 dimensions"),
        "{message}"
    );
    let message = refusal(launch!(tma_box_5d[1, 256, stream](
        &other_box, 0, 0, 0, 0, 0, &mut out
    )));
    assert!(
        message.contains("is a tensor map of 3 dimensions")
            && message.contains("takes 5 dimensions"),
        "{message}"
    );
}
