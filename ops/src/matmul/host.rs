//! [`matmul`]'s checks and launches.

use super::sgemm::{sgemm_8x8, GemmShape};
use super::{
    pack_k_major, pad_rows_k_major, transpose_k_major, MatmulPath, PAD_THREADS, PAD_TILE_COLS,
    PAD_TILE_ROWS, TRANSPOSE_ROWS, TRANSPOSE_TILE,
};
use gpu_device::half::{bf16, f16};
use gpu_device::vector::VectorElement;
use gpu_runtime::bytemuck::AnyBitPattern;
use gpu_runtime::{launch, Device, DeviceBuffer, DeviceCopy, Error, Result, Stream};

const OPERATION: &str = "gpu_ops::matmul";

/// An element type [`matmul`] multiplies: `bf16` and `f16` (tensor cores,
/// f32 accumulation, C in the inputs' type as `torch.matmul` returns it)
/// and `f32` (the FP32 SGEMM). Sealed: the kernels decide which types there
/// are.
pub trait MatmulElement: DeviceCopy + private::Sealed {
    /// The path for this type on a device of this compute capability,
    /// `None` where none runs (see [`matmul_path`]).
    #[doc(hidden)]
    fn path(compute_capability: (u32, u32)) -> Option<MatmulPath>;
    /// The type's name, for errors.
    #[doc(hidden)]
    const NAME: &'static str;
    /// Queues `C = A @ B` for checked extents (see [`matmul_on`]).
    #[doc(hidden)]
    fn product(
        a: &DeviceBuffer<Self>,
        b: &DeviceBuffer<Self>,
        extents: Extents,
        stream: &Stream,
    ) -> Result<DeviceBuffer<Self>>;
}

mod private {
    pub trait Sealed {}
    impl Sealed for gpu_device::half::bf16 {}
    impl Sealed for gpu_device::half::f16 {}
    impl Sealed for f32 {}
}

/// `m`, `k`, `n`, checked: none zero, and the buffers hold them.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Extents {
    m: usize,
    k: usize,
    n: usize,
}

/// `C = A @ B` on the current stream: see [`matmul_on`].
///
/// ```no_run
/// use gpu_device::half::{bf16, f16};
/// use gpu_runtime::DeviceBuffer;
///
/// // A: 2 × 3, B: 3 × 2, row-major (torch's contiguous tensors).
/// let a: Vec<bf16> = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].map(bf16::from_f32).to_vec();
/// let b: Vec<bf16> = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0].map(bf16::from_f32).to_vec();
/// let (da, db) = (DeviceBuffer::from_host_sync(&a)?, DeviceBuffer::from_host_sync(&b)?);
/// let c = gpu_ops::matmul(&da, (2, 3), &db, (3, 2))?;
/// let c: Vec<f32> = c.to_host_sync()?.into_iter().map(bf16::to_f32).collect();
/// assert_eq!(c, [4.0, 5.0, 10.0, 11.0]);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn matmul<T: MatmulElement>(
    a: &DeviceBuffer<T>,
    a_shape: (usize, usize),
    b: &DeviceBuffer<T>,
    b_shape: (usize, usize),
) -> Result<DeviceBuffer<T>> {
    matmul_on(a, a_shape, b, b_shape, &gpu_runtime::current_stream()?)
}

/// `C = A @ B`, as `torch.matmul` of two 2-D tensors: A is `a_shape = (m,
/// k)`, B is `b_shape = (k, n)`, both row-major and dense in their buffers
/// (`a.len() == m * k`, `b.len() == k * n`); C, returned, is `m × n`
/// row-major, of the inputs' type, queued on `stream` (the buffers must be
/// on its device).
///
/// - `bf16` and `f16`: tensor cores with f32 accumulation, each element of
///   C rounded once to the inputs' type (as torch and cuBLAS do): Hopper's `wgmma` on compute
///   capability 9.0, `mma.sync` on the other devices of sm_80 and later (a
///   device before sm_80 is an error naming it; convert to f32 there; see
///   [`matmul_path`]). `wgmma` reads A and B as they are (B MN-major);
///   `mma.sync` reads a transposed copy of B. A row of a multiple of 8
///   elements is read in place; other rows are copied padded first (A's
///   when `k` is not a multiple of 8, B's when `n` is not).
/// - `f32`: the register-tiled FP32 SGEMM, on every device (FMA
///   accumulation in f32; not TF32).
///
/// Errors, each naming the operand and the numbers: inner extents that
/// differ, an empty matrix (a zero extent), a buffer whose length is not
/// its shape's, a buffer on another device than `stream`'s, extents past
/// what the kernels index.
pub fn matmul_on<T: MatmulElement>(
    a: &DeviceBuffer<T>,
    a_shape: (usize, usize),
    b: &DeviceBuffer<T>,
    b_shape: (usize, usize),
    stream: &Stream,
) -> Result<DeviceBuffer<T>> {
    let extents = check(
        (a.len(), a.device(), a_shape),
        (b.len(), b.device(), b_shape),
        stream.device(),
    )?;
    T::product(a, b, extents, stream)
}

/// The kernel [`matmul`] of `T` buffers runs on device `device` (see
/// [`MatmulPath`]), or the error it gives there: `bf16` on a device before
/// sm_80 (no tensor cores), a device that does not exist.
///
/// ```no_run
/// use gpu_device::half::{bf16, f16};
/// use gpu_ops::matmul::{matmul_path, MatmulPath};
///
/// // An H100 or H200 (compute capability 9.0) runs bf16 on `wgmma`.
/// assert_eq!(matmul_path::<bf16>(0)?, MatmulPath::Wgmma);
/// assert_eq!(matmul_path::<f32>(0)?, MatmulPath::Sgemm);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub fn matmul_path<T: MatmulElement>(device: usize) -> Result<MatmulPath> {
    let capability = Device::get(device)?.limits().compute_capability;
    T::path(capability).ok_or_else(|| {
        invalid(format!(
            "{} needs tensor cores (sm_80 or later), and device {device} is compute capability {}.{}: multiply in f32 there",
            T::NAME,
            capability.0,
            capability.1
        ))
    })
}

fn invalid(reason: String) -> Error {
    Error::InvalidArgument {
        operation: OPERATION,
        reason,
    }
}

/// The checks of every input, before any work is queued.
fn check(
    (a_len, a_device, (m, k)): (usize, usize, (usize, usize)),
    (b_len, b_device, (k_b, n)): (usize, usize, (usize, usize)),
    stream_device: usize,
) -> Result<Extents> {
    let shapes = format!("A is {m} × {k}, B is {k_b} × {n}");
    if k != k_b {
        return Err(invalid(format!(
            "{shapes}: A's columns must equal B's rows"
        )));
    }
    if m == 0 || k == 0 || n == 0 {
        return Err(invalid(format!(
            "{shapes}: an empty matrix (a zero extent)"
        )));
    }
    for (name, len, rows, cols) in [("a", a_len, m, k), ("b", b_len, k, n)] {
        match rows.checked_mul(cols) {
            Some(elements) if elements == len => {}
            Some(elements) => {
                return Err(invalid(format!(
                    "`{name}` holds {len} elements, but {shapes}: {rows} × {cols} = {elements}"
                )))
            }
            None => {
                return Err(invalid(format!(
                    "{shapes}: {rows} × {cols} overflows usize"
                )))
            }
        }
    }
    for (name, device) in [("a", a_device), ("b", b_device)] {
        if device != stream_device {
            return Err(invalid(format!(
                "`{name}` is on device {device}, but the stream is on device {stream_device}: copy it there first"
            )));
        }
    }
    // C's elements (and the kernels' 32-bit grids) must be countable.
    m.checked_mul(n)
        .filter(|&c| c <= isize::MAX as usize)
        .ok_or_else(|| invalid(format!("{shapes}: C's {m} × {n} elements overflow")))?;
    Ok(Extents { m, k, n })
}

/// Threads a block of [`pack_k_major`].
const PACK_THREADS: usize = 256;

/// The elements of a packed `rows × ld` buffer, or the error when they
/// overflow.
fn packed_len(rows: usize, ld: usize) -> Result<usize> {
    rows.checked_mul(ld)
        .ok_or_else(|| invalid(format!("{rows} × {ld} packed elements overflow usize")))
}

/// A grid of `x × y` blocks, or `None` past a grid's extents (more rows
/// than its y extent of 65 535 holds: the callers' element-wise pack then).
fn grid_2d(x: usize, y: usize) -> Option<(u32, u32)> {
    match (u32::try_from(x), u32::try_from(y)) {
        (Ok(x), Ok(y)) if y <= 65_535 => Some((x, y)),
        _ => None,
    }
}

/// `src`'s `rows × cols` matrix (element `(r, c)` at `r * row_step + c *
/// col_step`) as a new `rows × ld` row-major buffer.
fn pack<T>(
    src: &DeviceBuffer<T>,
    (rows, cols, ld): (usize, usize, usize),
    (row_step, col_step): (usize, usize),
    stream: &Stream,
) -> Result<DeviceBuffer<T>>
where
    T: DeviceCopy + pack_k_major::Instance,
{
    let len = packed_len(rows, ld)?;
    let mut out = DeviceBuffer::zeroed_on(len, stream)?;
    launch!(pack_k_major[len.div_ceil(PACK_THREADS), PACK_THREADS, stream](
        src, rows, cols, ld, row_step, col_step, &mut out
    ))?;
    Ok(out)
}

/// A grid of `x` blocks by `tile_rows` rows of blocks, those past a grid's
/// y extent of 65 535 folded into z (a tile map's tile row `y + Y z`), or
/// `None` past a grid's extents.
fn tile_grid(x: usize, tile_rows: usize) -> Option<(u32, u32, u32)> {
    const Y: usize = 65_535;
    let (y, z) = if tile_rows <= Y {
        (tile_rows, 1)
    } else {
        (Y, tile_rows.div_ceil(Y))
    };
    match (u32::try_from(x), u32::try_from(y), u32::try_from(z)) {
        (Ok(x), Ok(y), Ok(z)) if x <= i32::MAX as u32 && z <= 65_535 => Some((x, y, z)),
        _ => None,
    }
}

/// `src` (`rows × cols`, row-major) as a new `rows × ld` buffer, each row
/// padded with zeros ([`pad_rows_k_major`], 16-byte runs; the element-wise
/// [`pack_k_major`] for a buffer of more than `u32::MAX` elements, which
/// its `u32` extents do not hold).
fn pad_rows<T>(
    src: &DeviceBuffer<T>,
    (rows, cols, ld): (usize, usize, usize),
    stream: &Stream,
) -> Result<DeviceBuffer<T>>
where
    T: DeviceCopy
        + VectorElement
        + AnyBitPattern
        + Default
        + pack_k_major::Instance
        + pad_rows_k_major::Instance,
{
    let len = packed_len(rows, ld)?;
    let grid = tile_grid(ld.div_ceil(PAD_TILE_COLS), rows.div_ceil(PAD_TILE_ROWS));
    let Some(grid) = grid.filter(|_| len <= u32::MAX as usize) else {
        return pack(src, (rows, cols, ld), (cols, 1), stream);
    };
    // Not zeroed: the grid covers every element, the padding included.
    let mut out = DeviceBuffer::empty_on(len, stream)?;
    let view = out.view_2d_mut(rows, ld)?;
    launch!(pad_rows_k_major[grid, PAD_THREADS as u32, stream](src, cols, view))?;
    Ok(out)
}

/// `src` (`k × n`, row-major) transposed into a new `n × ld` buffer, its
/// columns `k..ld` zero ([`transpose_k_major`]).
fn transpose<T>(
    src: &DeviceBuffer<T>,
    (k, n, ld): (usize, usize, usize),
    stream: &Stream,
) -> Result<DeviceBuffer<T>>
where
    T: DeviceCopy + AnyBitPattern + Default + pack_k_major::Instance + transpose_k_major::Instance,
{
    let len = packed_len(n, ld)?;
    let Some(grid) = grid_2d(ld.div_ceil(TRANSPOSE_TILE), n.div_ceil(TRANSPOSE_TILE)) else {
        return pack(src, (n, k, ld), (1, n), stream);
    };
    // Not zeroed: the transpose's grid covers every element, its columns
    // `k..ld` included (zeros there).
    let mut out = DeviceBuffer::empty_on(len, stream)?;
    let view = out.view_2d_mut(n, ld)?;
    launch!(transpose_k_major[grid, (TRANSPOSE_TILE as u32, TRANSPOSE_ROWS as u32), stream](
        src, k, view
    ))?;
    Ok(out)
}

/// The 16-bit types: `path`'s kernel of each (`gemm_<type>_wgmma_tma_kn`,
/// `gemm_<type>_mma_sync`).
macro_rules! tensor_core_element {
    ($t:ident, $wgmma:ident, $mma_sync:ident) => {
        impl MatmulElement for $t {
            const NAME: &'static str = stringify!($t);

            fn path(compute_capability: (u32, u32)) -> Option<MatmulPath> {
                MatmulPath::tensor_cores(compute_capability)
            }

            fn product(
                a: &DeviceBuffer<$t>,
                b: &DeviceBuffer<$t>,
                Extents { m, k, n }: Extents,
                stream: &Stream,
            ) -> Result<DeviceBuffer<$t>> {
                use super::gemm_tc::{$mma_sync, GEMM_TC_BM, GEMM_TC_BK, GEMM_TC_SHARED_BYTES, GEMM_TC_THREADS};
                use super::gemm_wgmma_tma::{$wgmma, GEMM_WGMMA_TMA_SHARED_BYTES, GEMM_WGMMA_TMA_THREADS};
                use gpu_runtime::{Swizzle, TensorMap};
                let blocks = tile_blocks(m, n)?;
                // A's rows (and B's, for `wgmma`) padded to 8 elements
                // where they are not: every 16-byte chunk aligned, as the
                // copy engine and `cp.async` need.
                let (a, ld) = rows_of_16_bytes(a, (m, k), stream)?;
                // Not zeroed: both kernels write every element of C (their
                // tiles cover it, the ragged edges guarded).
                let mut c = DeviceBuffer::<$t>::empty_on(m * n, stream)?;
                let view = c.view_2d_mut(m, n)?;
                match matmul_path::<$t>(stream.device())? {
                    MatmulPath::Wgmma => {
                        // B as it is (`k × n`), read MN-major: no copy
                        // unless its rows need padding.
                        let (b, ld_b) = rows_of_16_bytes(b, (k, n), stream)?;
                        // The maps borrow A and B; the launch keeps what
                        // the kernel reads alive past them.
                        let bk = GEMM_TC_BK as u32;
                        let map_a = TensorMap::matrix(a.buffer(), (m, k, ld), (GEMM_TC_BM as u32, bk), Swizzle::Bytes128)?;
                        let map_b = TensorMap::matrix(b.buffer(), (k, n, ld_b), (bk, bk), Swizzle::Bytes128)?;
                        let shared = GEMM_WGMMA_TMA_SHARED_BYTES as u32;
                        // Persistent: one block a multiprocessor at most.
                        let sms = gpu_runtime::Device::get(stream.device())?.limits().multiprocessor_count;
                        let blocks = blocks.min(sms.max(1));
                        launch!($wgmma[blocks, GEMM_WGMMA_TMA_THREADS, stream, shared](&map_a, &map_b, k, view))?;
                    }
                    // MmaSync: the other path `MatmulPath::tensor_cores` gives.
                    _ => {
                        // Bᵀ: row j of it is column j of B (`b[c * n + j]`).
                        let b_t = transpose(b, (k, n, ld), stream)?;
                        let shared = GEMM_TC_SHARED_BYTES as u32;
                        launch!($mma_sync[blocks, GEMM_TC_THREADS, stream, shared](a.buffer(), &b_t, k, ld, ld, view))?;
                    }
                }
                Ok(c)
            }
        }
    };
}

tensor_core_element!(bf16, gemm_bf16_wgmma_tma_kn, gemm_bf16_mma_sync);
tensor_core_element!(f16, gemm_f16_wgmma_tma_kn, gemm_f16_mma_sync);

/// The blocks of the tensor-core GEMMs' grid for an `m × n` C: one a tile,
/// or the error when they are past a grid's.
fn tile_blocks(m: usize, n: usize) -> Result<u32> {
    use super::gemm_tc::{GEMM_TC_BM, GEMM_TC_BN};
    let tiles = m.div_ceil(GEMM_TC_BM).checked_mul(n.div_ceil(GEMM_TC_BN));
    tiles
        .and_then(|t| u32::try_from(t).ok())
        .filter(|&t| t <= i32::MAX as u32)
        .ok_or_else(|| {
            invalid(format!(
                "C is {m} × {n}: more {GEMM_TC_BM} × {GEMM_TC_BN} tiles than a grid has blocks"
            ))
        })
}

/// An operand as a kernel reads it: the caller's buffer, or a copy with
/// its rows padded.
enum Rows<'a, T: DeviceCopy> {
    Dense(&'a DeviceBuffer<T>),
    Padded(DeviceBuffer<T>),
}

impl<T: DeviceCopy> Rows<'_, T> {
    fn buffer(&self) -> &DeviceBuffer<T> {
        match self {
            Rows::Dense(b) => b,
            Rows::Padded(b) => b,
        }
    }
}

/// `src` (`rows × cols`, row-major) with rows of a multiple of 8 elements
/// (16 bytes), and their length: `src` itself where `cols` is such a
/// multiple, else a copy with each row padded with zeros to a multiple of
/// 64 elements (128 bytes: every row then starts on a line of the
/// second-level cache, which the copy engine's boxes read whole; rows
/// padded to 8 only cost the `wgmma` kernel 13 % at 4099 × 4097 × 4095,
/// `benches/NOTES.md`).
fn rows_of_16_bytes<'a, T>(
    src: &'a DeviceBuffer<T>,
    (rows, cols): (usize, usize),
    stream: &Stream,
) -> Result<(Rows<'a, T>, usize)>
where
    T: DeviceCopy
        + VectorElement
        + AnyBitPattern
        + Default
        + pack_k_major::Instance
        + pad_rows_k_major::Instance,
{
    if cols.is_multiple_of(8) {
        return Ok((Rows::Dense(src), cols));
    }
    let ld = cols.next_multiple_of(64);
    Ok((Rows::Padded(pad_rows(src, (rows, cols, ld), stream)?), ld))
}

impl MatmulElement for f32 {
    const NAME: &'static str = "f32";

    fn path(_: (u32, u32)) -> Option<MatmulPath> {
        Some(MatmulPath::Sgemm)
    }

    fn product(
        a: &DeviceBuffer<f32>,
        b: &DeviceBuffer<f32>,
        Extents { m, k, n }: Extents,
        stream: &Stream,
    ) -> Result<DeviceBuffer<f32>> {
        let narrow = |what: &str, v: usize| {
            u32::try_from(v).map_err(|_| {
                invalid(format!(
                    "{what} is {v}: the FP32 kernel indexes with 32 bits (at most {})",
                    u32::MAX
                ))
            })
        };
        for (what, rows, cols) in [("A", m, k), ("B", k, n), ("C", m, n)] {
            if rows.checked_mul(cols).is_none_or(|e| e > u32::MAX as usize) {
                return Err(invalid(format!(
                    "{what} is {rows} × {cols}: the FP32 kernel indexes with 32 bits (at most {} elements)",
                    u32::MAX
                )));
            }
        }
        let shape = GemmShape {
            m: narrow("m", m)?,
            n: narrow("n", n)?,
            k: narrow("k", k)?,
            lda: narrow("k", k)?,
            ldb: narrow("n", n)?,
        };
        // Row and column tiles of 128: the grid's y extent is at most 65535.
        let grid = (n.div_ceil(128), m.div_ceil(128));
        if grid.1 > 65535 {
            return Err(invalid(format!(
                "m is {m}: more than 65535 row tiles of 128 (split A's rows)"
            )));
        }
        let mut c = DeviceBuffer::<f32>::zeroed_on(m * n, stream)?;
        let view = c.view_2d_mut(m, n)?;
        launch!(sgemm_8x8[grid, 256, stream](a, b, shape, view))?;
        Ok(c)
    }
}
