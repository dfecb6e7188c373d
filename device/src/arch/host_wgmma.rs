//! The simulator's `wgmma`: each thread computes its own accumulator
//! elements straight from the shared tiles (the descriptor's layout and
//! swizzle decoded here), so no thread waits for another: products exact
//! (16-bit operands fit an f64 product), summed in f64 and rounded to f32
//! once per instruction. The fences, waits and `setmaxnreg` are nothing:
//! the product is done when the instruction returns.
//!
//! On a GPU the four warps of a warpgroup issue one `wgmma` together: a
//! warp that passes another shape, other tiles or another scale flag than
//! its warpgroup's others gets an undefined result. Here each thread's
//! `n`-th `wgmma` is compared with the first one its warpgroup issued as
//! its `n`-th ([`agree`]); a difference fails the launch, naming the
//! warpgroup, both warps and what each passed.

use super::host::{block_dim, current_serial, thread_idx};
use super::SharedMatrix;
use std::cell::RefCell;
use std::collections::HashMap;

/// The operands' type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operands {
    Bf16,
    F16,
}

/// The value of a 16-bit operand.
fn half(kind: Operands, bits: u16) -> f64 {
    match kind {
        Operands::Bf16 => f32::from_bits((bits as u32) << 16) as f64,
        Operands::F16 => crate::half::f16::from_bits(bits).to_f64(),
    }
}

/// The element `(row, k)` of the tile `m` (k counted from the
/// descriptor's start, `k_byte_offset` after its base; `row` one of M or
/// N): the byte offset of the unswizzled layout, K-major or MN-major (see
/// [`SharedMatrix`]), with the swizzle's XOR of address bits 4.. by bits
/// 7.. (the tile is aligned to its pattern, so offsets from its start
/// swizzle as the addresses do).
///
/// # Safety
/// `m.base` holds the tile: the bytes of `(row, k)` and the rest of its
/// 16-byte chunk's row are readable.
unsafe fn element(kind: Operands, m: &SharedMatrix, row: usize, k: usize) -> f64 {
    let row_bytes = m.row_bytes as usize;
    let offset = if m.chunk_bytes == 0 {
        row * row_bytes + m.k_byte_offset as usize + 2 * k
    } else {
        // MN-major: a row of `row_bytes / 2` columns a k, chunks of
        // columns `chunk_bytes` apart.
        let columns = row_bytes / 2;
        (row / columns) * m.chunk_bytes as usize
            + m.k_byte_offset as usize
            + k * row_bytes
            + 2 * (row % columns)
    };
    // The layout type's 16-byte chunks per row, less one: 128-byte (1),
    // 64-byte (2) and 32-byte (3) swizzles.
    let mask = match m.layout_type {
        1 => 7,
        2 => 3,
        _ => 1,
    };
    debug_assert_eq!(mask, row_bytes / 16 - 1, "the layout's row");
    let swizzled = offset ^ (((offset >> 7) & mask) << 4);
    // SAFETY: the swizzle moves a 16-byte chunk within its row, which the
    // caller says is readable; 2-byte aligned (the base is).
    let bits = unsafe { m.base.add(swizzled).cast::<u16>().read() };
    half(kind, bits)
}

/// This thread's linear index in its block.
fn linear_rank() -> usize {
    let [x, y, z] = thread_idx().map(|v| v as usize);
    let [dx, dy, _] = block_dim().map(|v| v as usize);
    x + dx * (y + dy * z)
}

/// This thread's rank in its warpgroup (`threadIdx` linear, mod 128).
fn warpgroup_rank() -> usize {
    linear_rank() % 128
}

/// What the threads of a warpgroup must agree on for one `wgmma`: the
/// shape and type, each operand's descriptor (its tile's address, the K
/// offset, the row, the swizzle and the chunks of an MN-major tile) and
/// the scale flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Issue {
    shape: (&'static str, usize),
    a: Descriptor,
    b: Descriptor,
    scale_d: bool,
}

/// A descriptor's fields: address, K offset, row bytes, layout type and
/// chunk bytes (0: K-major).
type Descriptor = (usize, u32, u32, u8, u32);

impl Issue {
    fn new(kind: Operands, a: &SharedMatrix, b: &SharedMatrix, n: usize, scale_d: bool) -> Issue {
        let kind = match kind {
            Operands::Bf16 => "bf16",
            Operands::F16 => "f16",
        };
        let descriptor = |m: &SharedMatrix| {
            (
                m.base as usize,
                m.k_byte_offset,
                m.row_bytes,
                m.layout_type,
                m.chunk_bytes,
            )
        };
        Issue {
            shape: (kind, n),
            a: descriptor(a),
            b: descriptor(b),
            scale_d,
        }
    }
}

impl core::fmt::Display for Issue {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let tile = |f: &mut core::fmt::Formatter<'_>, (base, k, row, layout, chunk): Descriptor| {
            let major = if chunk == 0 {
                "K-major".to_string()
            } else {
                format!("MN-major, chunks {chunk} bytes apart")
            };
            write!(
                f,
                "tile at {base:#x} ({major}, K byte offset {k}, rows of {row} bytes, layout {layout})"
            )
        };
        write!(f, "m64n{}k16.{} with A a ", self.shape.1, self.shape.0)?;
        tile(f, self.a)?;
        f.write_str(", B a ")?;
        tile(f, self.b)?;
        write!(f, ", scale-d {}", self.scale_d)
    }
}

/// The first thread's `n`-th issue of a warpgroup, and how many of its
/// threads have compared theirs with it.
struct Agreed {
    issue: Issue,
    warp: usize,
    compared: usize,
}

/// A warpgroup's issues so far: per thread how many, and those that not
/// all its threads have compared yet.
#[derive(Default)]
struct Warpgroup {
    issued: HashMap<usize, u64>,
    open: HashMap<u64, Agreed>,
}

thread_local! {
    /// The block this OS thread runs (its thread 0's serial: a block's
    /// threads all run on one OS thread, one block at a time) and its
    /// warpgroups' issues; another block's first `wgmma` starts afresh.
    static ISSUES: RefCell<(u64, HashMap<usize, Warpgroup>)> = RefCell::new((0, HashMap::new()));
}

/// Compares this thread's `wgmma` with its warpgroup's: the first thread
/// to issue its `n`-th sets it, each other thread's `n`-th must equal it.
#[track_caller]
fn agree(issue: Issue) {
    let linear = linear_rank();
    let block = current_serial() - linear as u64;
    let (group, rank) = (linear / 128, linear % 128);
    let threads = (crate::block_size() - 128 * group).min(128);
    let disagreement = ISSUES.with(|issues| {
        let mut issues = issues.borrow_mut();
        if issues.0 != block {
            *issues = (block, HashMap::new());
        }
        let wg = issues.1.entry(group).or_default();
        let count = wg.issued.entry(rank).or_insert(0);
        let n = *count;
        *count += 1;
        let agreed = wg.open.entry(n).or_insert(Agreed {
            issue,
            warp: rank / 32,
            compared: 0,
        });
        agreed.compared += 1;
        let disagreement = (agreed.issue != issue).then_some((n, agreed.warp, agreed.issue));
        if agreed.compared == threads {
            wg.open.remove(&n);
        }
        disagreement
    });
    if let Some((n, warp, agreed)) = disagreement {
        panic!(
            "wgmma: the warps of warpgroup {group} disagree on their wgmma #{n}: warp {warp} issued {agreed}, but warp {} issued {issue}; the four warps of a warpgroup must issue the same wgmma (shape, tiles, scale-d), or the GPU's result is undefined",
            rank / 32
        );
    }
}

/// `D = A Bᵀ + D` (or `A Bᵀ` without `scale_d`) for this thread's
/// elements: register `i` is row `16 w + l / 4 + 8 ((i % 4) / 2)`, column
/// `8 (i / 4) + 2 (l % 4) + i % 2`, for warp `w` and lane `l` of the
/// warpgroup (the PTX ISA's m64nNk16 f32 accumulator layout).
///
/// # Safety
/// `a` has 64 rows, `b` as many as `d` has columns (`2 d.len()`).
#[track_caller]
unsafe fn mma(kind: Operands, a: &SharedMatrix, b: &SharedMatrix, d: &mut [f32], scale_d: bool) {
    agree(Issue::new(kind, a, b, 2 * d.len(), scale_d));
    let rank = warpgroup_rank();
    let (warp, lane) = (rank / 32, rank % 32);
    for (i, out) in d.iter_mut().enumerate() {
        let row = 16 * warp + lane / 4 + 8 * ((i % 4) / 2);
        let col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
        let sum: f64 = (0..16)
            // SAFETY: `row < 64` and `col < 2 d.len()`: the caller's rows.
            .map(|k| unsafe { element(kind, a, row, k) * element(kind, b, col, k) })
            .sum();
        let c = if scale_d { *out as f64 } else { 0.0 };
        *out = (c + sum) as f32;
    }
}

macro_rules! wgmma {
    ($($name:ident, $kind:ident, $regs:literal;)*) => {$(
        /// The simulator's `wgmma.mma_async` of the shape and type its name
        /// says (see [`mma`]).
        ///
        /// # Safety
        /// As on the GPU: `a` has 64 rows, `b` one per column of `d`, of
        /// the major `TRANS_B` says (0: K-major, 1: MN-major).
        #[track_caller]
        pub(crate) unsafe fn $name<const TRANS_B: u32>(a: &SharedMatrix, b: &SharedMatrix, d: &mut [f32; $regs], scale_d: bool) {
            debug_assert_eq!(TRANS_B == 1, b.chunk_bytes != 0, "B's major and imm-trans-b");
            // SAFETY: the caller's contract.
            unsafe { mma(Operands::$kind, a, b, d, scale_d) }
        }
    )*};
}

wgmma! {
    m64n64k16_bf16, Bf16, 32;
    m64n64k16_f16, F16, 32;
    m64n128k16_bf16, Bf16, 64;
    m64n128k16_f16, F16, 64;
    m64n256k16_bf16, Bf16, 128;
    m64n256k16_f16, F16, 128;
}

/// Nothing to order: every product is done when issued.
pub(crate) fn fence() {}
/// Nothing to close.
pub(crate) fn commit_group() {}
/// Nothing to wait for.
pub(crate) fn wait_group<const N: u32>() {}
/// Nothing to pin.
pub(crate) fn fence_operand<const R: usize>(_d: &mut [f32; R]) {}
/// One proxy on the simulator.
pub(crate) fn fence_proxy_async() {}
/// The simulator has no register file.
pub(crate) fn set_max_registers_inc<const N: u32>() {}
/// The simulator has no register file.
pub(crate) fn set_max_registers_dec<const N: u32>() {}

#[cfg(test)]
mod tests {
    use super::{element, Operands, SharedMatrix};

    #[test]
    fn the_128_byte_swizzle_moves_chunks_by_the_row_within_8_rows() {
        // 16 rows of 64 elements, each element its own slot number.
        let tile: Vec<u16> = (0..16 * 64).collect();
        let m = SharedMatrix {
            base: tile.as_ptr().cast(),
            k_byte_offset: 0,
            row_bytes: 128,
            layout_type: 1,
            chunk_bytes: 0,
        };
        // The slot of element (row, k) by the 128-byte swizzle's rule.
        let slot = |row: usize, k: usize| {
            let offset = row * 128 + 2 * k;
            (offset ^ (((offset >> 7) & 7) << 4)) / 2
        };
        // Row 0 is unswizzled; row 1's chunk 0 (elements 0..8) is stored in
        // chunk 1; row 9 as row 1.
        assert_eq!(slot(0, 5), 5);
        assert_eq!(slot(1, 0), 64 + 8);
        assert_eq!(slot(1, 8), 64);
        assert_eq!(slot(9, 0), 9 * 64 + 8);
        assert_eq!(slot(7, 63), 7 * 64 + (63 ^ 56));
        // `element` reads those slots (each slot's bits as an f16).
        for (row, k) in [(0, 5), (1, 0), (3, 17), (15, 63)] {
            // SAFETY: 16 rows of 128 bytes.
            let got = unsafe { element(Operands::F16, &m, row, k) };
            let want = crate::half::f16::from_bits(slot(row, k) as u16).to_f64();
            assert_eq!(got.to_bits(), want.to_bits());
        }
    }
}
