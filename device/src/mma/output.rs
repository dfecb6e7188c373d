//! [`WarpTiles`]: the map of a GEMM's output whose elements each lane holds
//! in [`Accumulator`]s, and its writes from them.

use super::{Accumulator, NotSend};
use crate::ownership::sealed::Sealed;
use crate::ownership::{DisjointMatrix, Map, MatrixMap};
use crate::race_check;
use crate::thread_owner::Owner;
use core::marker::PhantomData;

/// The output of a warp-tiled GEMM: each block computes a `BM × BN` tile
/// (`BM = WARPS_M · TILES_M · 16`, `BN = WARPS_N · TILES_N · 8`), its
/// `WARPS_M × WARPS_N` warps each a `TILES_M · 16 × TILES_N · 8` sub-tile
/// (warp `w` at row `w / WARPS_N`, column `w % WARPS_N`), held as
/// `TILES_M × TILES_N` [`Accumulator`]s per lane, in the accumulator's lane
/// layout. Blocks take the tiles in the grouped order of CUTLASS's
/// threadblock swizzle: block `b` (its [`block_rank`](crate::leader::block_rank))
/// goes down `GROUP_M` tile rows, then right.
///
/// `IDLE_WARPS` more warps after those own no element: the warps of a
/// producer warpgroup that only feeds the others (a TMA ring's).
///
/// Disjoint: the grouped order names each tile of the matrix once (blocks
/// past the last tile get none; a persistent kernel's block of rank `b` in
/// a grid of `G` takes tiles `b`, `b + G`, ... of it, [`WarpTileItems::strided`]); within a tile, the warp's rank names its
/// sub-tile once (an idle warp gets no place: [`WarpTileItems::mine`]
/// panics there), and the accumulator layout gives each element of a
/// 16 × 8 tile to one lane. Needs blocks of `(WARPS_M · WARPS_N +
/// IDLE_WARPS) · 32` threads.
pub enum WarpTiles<
    const WARPS_M: usize,
    const WARPS_N: usize,
    const TILES_M: usize,
    const TILES_N: usize,
    const GROUP_M: usize = 8,
    const IDLE_WARPS: usize = 0,
> {}

impl<
        const WM: usize,
        const WN: usize,
        const TM: usize,
        const TN: usize,
        const G: usize,
        const I: usize,
    > Sealed for WarpTiles<WM, WN, TM, TN, G, I>
{
}
impl<
        const WM: usize,
        const WN: usize,
        const TM: usize,
        const TN: usize,
        const G: usize,
        const I: usize,
    > Map for WarpTiles<WM, WN, TM, TN, G, I>
{
    const BLOCK_THREADS: u32 = {
        assert!(
            WM >= 1 && WN >= 1 && WM * WN <= 32,
            "WarpTiles: 1 to 32 warps a block"
        );
        assert!(
            TM >= 1 && TN >= 1 && TM * 16 * WM <= 1 << 16 && TN * 8 * WN <= 1 << 16,
            "WarpTiles: a block's tile spans 16 to 65536 rows and 8 to 65536 columns"
        );
        assert!(G >= 1, "WarpTiles: GROUP_M is at least 1");
        assert!(
            WM * WN + I <= 32,
            "WarpTiles: 1 to 32 warps a block, idle ones included"
        );
        ((WM * WN + I) * 32) as u32
    };
}
impl<
        const WM: usize,
        const WN: usize,
        const TM: usize,
        const TN: usize,
        const G: usize,
        const I: usize,
    > MatrixMap for WarpTiles<WM, WN, TM, TN, G, I>
{
}

/// This thread's place under [`WarpTiles`]: its block's tile, its warp's
/// sub-tile. From [`WarpTileItems::mine`]; neither `Send` nor `Sync`.
pub struct WarpTileItems<M> {
    /// The block's tile's first row and column (past the matrix for a
    /// block with no tile).
    block_row: usize,
    block_col: usize,
    /// The warp's sub-tile within it.
    warp_row: usize,
    warp_col: usize,
    owner: Owner,
    _map: PhantomData<fn() -> M>,
    _thread: NotSend,
}

impl<
        const WM: usize,
        const WN: usize,
        const TM: usize,
        const TN: usize,
        const G: usize,
        const I: usize,
    > WarpTileItems<WarpTiles<WM, WN, TM, TN, G, I>>
{
    /// Rows of a block's tile.
    pub const BLOCK_ROWS: usize = WM * TM * 16;
    /// Columns of a block's tile.
    pub const BLOCK_COLS: usize = WN * TN * 8;

    /// This thread's place for the matrix `out`. Panics (a trap on the GPU)
    /// unless the block has `(WM · WN + I) · 32` threads (the launcher
    /// refuses such launches first), and in an idle warp (one of the last
    /// `I`), which owns nothing.
    #[inline(always)]
    #[track_caller]
    pub fn mine<T>(out: &DisjointMatrix<'_, T, WarpTiles<WM, WN, TM, TN, G, I>>) -> Self {
        let threads = <WarpTiles<WM, WN, TM, TN, G, I> as Map>::BLOCK_THREADS as usize;
        let size = crate::block_size();
        if size != threads {
            crate::ownership::tiles::wrong_block_size(threads as u32, size)
        }
        let warp = crate::thread_rank() / 32;
        if warp >= WM * WN {
            idle_warp(warp, WM * WN)
        }
        let (block_row, block_col) = Self::block_origin_of(out);
        WarpTileItems {
            block_row,
            block_col,
            warp_row: warp / WN * TM * 16,
            warp_col: warp % WN * TN * 8,
            owner: Owner::current(),
            _map: PhantomData,
            _thread: PhantomData,
        }
    }

    /// This thread's place in tile `i` of its block's tiles in grid-stride
    /// order, for a persistent kernel: the block of rank `b` in a grid of
    /// `G` blocks owns tiles `b`, `b + G`, `b + 2G`, ... of the grouped
    /// order, each of them only (the ranks partition the tiles), and `i`
    /// names the `i`-th; `None` past its last. Panics as [`mine`](Self::mine).
    #[inline(always)]
    #[track_caller]
    pub fn strided<T>(
        out: &DisjointMatrix<'_, T, WarpTiles<WM, WN, TM, TN, G, I>>,
        i: usize,
    ) -> Option<Self> {
        let mut items = Self::mine(out);
        let (row, col) = Self::strided_origin((out.rows(), out.cols()), i)?;
        (items.block_row, items.block_col) = (row, col);
        Some(items)
    }

    /// The first row and column of tile `i` of this block's tiles of a
    /// `rows × cols` output in grid-stride order ([`strided`](Self::strided)),
    /// for any thread of the block (an idle warp's too, which feeds the
    /// others); `None` past its last.
    #[inline(always)]
    pub fn strided_origin((rows, cols): (usize, usize), i: usize) -> Option<(usize, usize)> {
        let tiles_m = rows.div_ceil(Self::BLOCK_ROWS);
        let tiles_n = cols.div_ceil(Self::BLOCK_COLS);
        let [gx, gy, gz] = crate::arch::grid_dim();
        let blocks = gx as usize * gy as usize * gz as usize;
        let t = i
            .checked_mul(blocks)?
            .checked_add(crate::leader::block_rank())?;
        if t >= tiles_m.checked_mul(tiles_n)? {
            return None;
        }
        let (tile_m, tile_n) = grouped_tile(t, tiles_m, tiles_n, G);
        Some((tile_m * Self::BLOCK_ROWS, tile_n * Self::BLOCK_COLS))
    }

    /// The first row and column of this block's tile of `out` (past the
    /// matrix for a block beyond the last tile), for any thread of the
    /// block: an idle warp's too, which feeds the others.
    #[inline(always)]
    pub fn block_origin_of<T>(
        out: &DisjointMatrix<'_, T, WarpTiles<WM, WN, TM, TN, G, I>>,
    ) -> (usize, usize) {
        let tiles_m = out.rows().div_ceil(Self::BLOCK_ROWS);
        let tiles_n = out.cols().div_ceil(Self::BLOCK_COLS);
        let (tile_m, tile_n) = grouped_tile(crate::leader::block_rank(), tiles_m, tiles_n, G);
        (
            tile_m.saturating_mul(Self::BLOCK_ROWS),
            tile_n.saturating_mul(Self::BLOCK_COLS),
        )
    }

    /// The first row and column of the block's tile (past the matrix for a
    /// block beyond the last tile).
    #[inline(always)]
    pub fn block_origin(&self) -> (usize, usize) {
        (self.block_row, self.block_col)
    }

    /// The first row and column of the warp's sub-tile within the block's
    /// tile.
    #[inline(always)]
    pub fn warp_origin(&self) -> (usize, usize) {
        (self.warp_row, self.warp_col)
    }
}

/// Tile `t`'s `(tile row, tile column)` in the grouped order, or one
/// outside the `tiles_m × tiles_n` grid for a `t` past the last.
#[inline(always)]
fn grouped_tile(t: usize, tiles_m: usize, tiles_n: usize, group_m: usize) -> (usize, usize) {
    let per_group = group_m * tiles_n;
    if per_group == 0 {
        return (tiles_m, tiles_n);
    }
    let group = t / per_group;
    let first_m = group * group_m;
    if first_m >= tiles_m {
        return (tiles_m, tiles_n);
    }
    let rows = (tiles_m - first_m).min(group_m);
    let in_group = t - group * per_group;
    (first_m + in_group % rows, in_group / rows)
}

impl<
        T,
        const WM: usize,
        const WN: usize,
        const TM: usize,
        const TN: usize,
        const G: usize,
        const I: usize,
    > DisjointMatrix<'_, T, WarpTiles<WM, WN, TM, TN, G, I>>
{
    /// Writes this lane's elements of `acc`, the warp's accumulator of
    /// 16 × 8 tile `(i, j)` of its sub-tile (`i < TILES_M`, `j < TILES_N`);
    /// elements outside the matrix are left out. A lane's two elements of a
    /// row are adjacent: `convert` rounds them together (`|lo, hi|
    /// bf16x2::from_f32s(lo, hi).to_array()`: one instruction for both),
    /// and where both are in the matrix and their pair is aligned to twice
    /// the element's size (2- and 4-byte elements), they are written with
    /// one store (a `bf16x2` store for `bf16`). Panics when `i` or `j` is
    /// out of range.
    #[inline(always)]
    #[track_caller]
    pub fn set_accumulator(
        &mut self,
        items: &WarpTileItems<WarpTiles<WM, WN, TM, TN, G, I>>,
        i: usize,
        j: usize,
        acc: &Accumulator,
        convert: impl Fn(f32, f32) -> [T; 2],
    ) {
        items.owner.check("a WarpTileItems token");
        if i >= TM || j >= TN {
            tile_out_of_range(i, j, TM, TN)
        }
        let row0 = items.block_row + items.warp_row + 16 * i;
        let col0 = items.block_col + items.warp_col + 8 * j;
        let [(r0, c0, v0), (_, _, v1), (r2, c2, v2), (_, _, v3)] = acc.elements();
        if self.holds_aligned_tile(row0, col0) {
            // SAFETY: the 16 × 8 tile at `(row0, col0)` is inside the
            // matrix and its pairs aligned (`holds_aligned_tile`); a lane's
            // elements are at rows `r0`, `r2 < 16`, columns `c0 + 1 < 8`.
            // The pairs are this lane's as in `write_row_pair`.
            unsafe {
                self.write_inside_pair(row0 + r0, col0 + c0, convert(v0, v1));
                self.write_inside_pair(row0 + r2, col0 + c2, convert(v2, v3));
            }
            return;
        }
        // Registers 0, 1 and 2, 3: a row's two adjacent columns each.
        // Two calls, not a loop over the pairs: LLVM kept such a loop
        // rolled, its array of pairs in local memory (379 `st.local` and
        // 128 `ld.local` in the mma.sync GEMM's epilogue).
        self.write_row_pair(row0 + r0, col0 + c0, convert(v0, v1));
        self.write_row_pair(row0 + r2, col0 + c2, convert(v2, v3));
    }

    /// [`set_accumulator`](Self::set_accumulator) of the tiles `(i, 0)` to
    /// `(i, TN - 1)`, tile `j` given by `tile(j)`: a warp's whole strip of
    /// 16 rows. Where the strip lies wholly inside the matrix with its
    /// pairs aligned, it is checked once and each pair stored with one
    /// store (a `wgmma` accumulator's 32 tiles: one check, not 32);
    /// elsewhere tile by tile. Panics when `i` is out of range.
    #[inline(always)]
    #[track_caller]
    pub fn set_accumulator_strip(
        &mut self,
        items: &WarpTileItems<WarpTiles<WM, WN, TM, TN, G, I>>,
        i: usize,
        tile: impl Fn(usize) -> Accumulator,
        convert: impl Fn(f32, f32) -> [T; 2],
    ) {
        items.owner.check("a WarpTileItems token");
        if i >= TM {
            tile_out_of_range(i, 0, TM, TN)
        }
        let row0 = items.block_row + items.warp_row + 16 * i;
        let col0 = items.block_col + items.warp_col;
        if self.holds_aligned_block(row0, col0, 16, 8 * TN) {
            crate::unroll::full::<TN>(|j| {
                let [(r0, c0, v0), (_, _, v1), (r2, c2, v2), (_, _, v3)] = tile(j).elements();
                let col = col0 + 8 * j;
                // SAFETY: the 16 × 8 TN strip at `(row0, col0)` is inside
                // the matrix with its pairs aligned (`holds_aligned_block`);
                // tile `j`'s lane elements are at rows `r0`, `r2 < 16`,
                // columns `col + c0 + 1 < col0 + 8 TN`, this lane's as in
                // `set_accumulator`.
                unsafe {
                    self.write_inside_pair(row0 + r0, col + c0, convert(v0, v1));
                    self.write_inside_pair(row0 + r2, col + c2, convert(v2, v3));
                }
            });
            return;
        }
        crate::unroll::full::<TN>(|j| self.set_accumulator(items, i, j, &tile(j), &convert));
    }

    /// Whether the 16 × 8 tile at `(row0, col0)` lies wholly inside the
    /// matrix with every pair of columns `(2c, 2c + 1)` of it aligned for
    /// one store: the tiles of a GEMM's full block tiles, checked once a
    /// tile rather than at each pair (the check is 32-bit: `len` fits a
    /// `u32`).
    #[inline(always)]
    fn holds_aligned_tile(&self, row0: usize, col0: usize) -> bool {
        self.holds_aligned_block(row0, col0, 16, 8)
    }

    /// Whether the `rows × cols` block at `(row0, col0)` (`cols` even) lies
    /// wholly inside the matrix with every pair of its columns aligned for
    /// one store.
    #[inline(always)]
    fn holds_aligned_block(&self, row0: usize, col0: usize, rows: usize, cols: usize) -> bool {
        let pair = core::mem::size_of::<[T; 2]>();
        (pair == 4 || pair == 8)
            && row0 < self.rows()
            && self.rows() - row0 >= rows
            && col0 < self.cols()
            && self.cols() - col0 >= cols
            && col0.is_multiple_of(2)
            && self.cols().is_multiple_of(2)
            && (self.ptr as usize).is_multiple_of(pair)
    }

    /// Writes `first` at `(row, col)` and `second` at `(row, col + 1)` with
    /// one store, the offset in 32 bits.
    ///
    /// # Safety
    /// Both are inside the matrix, this lane's, and the pair is aligned to
    /// its size (4 or 8 bytes): [`holds_aligned_tile`](Self::holds_aligned_tile)
    /// of the tile holding them, `col` even.
    #[inline(always)]
    unsafe fn write_inside_pair(&mut self, row: usize, col: usize, [first, second]: [T; 2]) {
        // `row * cols + col + 1 < len <= u32::MAX`: no wrap in `u32`.
        let at = row as u32 * self.cols() as u32 + col as u32;
        // SAFETY: inside the matrix (the caller), so inside the allocation.
        let element = unsafe { self.ptr.add(at as usize) };
        race_check::write_range(element, 2);
        // SAFETY: the caller's: inside, this lane's, aligned to the pair.
        unsafe { store_pair(element, first, second) }
    }

    /// Writes `first` at `(row, col)` and `second` at `(row, col + 1)`,
    /// those of them inside the matrix: one store where both are and the
    /// pair is aligned to its size. The caller passes a lane's own pair
    /// under `WarpTiles` (an accumulator's registers 0, 1 or 2, 3).
    #[inline(always)]
    fn write_row_pair(&mut self, row: usize, col: usize, [first, second]: [T; 2]) {
        let Some(at) = self.offset(row, col) else {
            return;
        };
        let pair = core::mem::size_of::<[T; 2]>();
        // SAFETY: `at` is inside the matrix (`offset`).
        let element = unsafe { self.ptr.add(at) };
        if col + 1 < self.cols()
            && (pair == 4 || pair == 8)
            && (element as usize).is_multiple_of(pair)
        {
            race_check::write_range(element, 2);
            // SAFETY: `(row, col)` and `(row, col + 1)` are inside the
            // matrix (`col + 1 < cols`), adjacent, and this lane's under
            // `WarpTiles` (its block's tile, its warp's sub-tile, its
            // accumulator elements: the caller's pair), every thread's
            // map; the pair is aligned to its size, 4 or 8 bytes.
            unsafe { store_pair(element, first, second) };
            return;
        }
        race_check::write(element);
        // SAFETY: inside the matrix, this lane's (as above).
        unsafe { element.write(first) };
        if let Some(next) = self.offset(row, col + 1) {
            // SAFETY: inside the matrix, this lane's (as above).
            let element = unsafe { self.ptr.add(next) };
            race_check::write(element);
            // SAFETY: as above.
            unsafe { element.write(second) };
        }
    }
}

/// Writes `first` and `second` at `element` and the next slot as one
/// integer of their bytes (any bytes are an integer, and the two values'
/// bytes are values of `T`; `ManuallyDrop`: the values move into memory).
///
/// # Safety
/// `element` and the slot after it are valid for writes, and `element` is
/// aligned to `[T; 2]`'s size, which is 4 or 8 bytes.
#[inline(always)]
unsafe fn store_pair<T>(element: *mut T, first: T, second: T) {
    let values = core::mem::ManuallyDrop::new([first, second]);
    let bytes = (&*values as *const [T; 2]).cast::<u8>();
    // SAFETY: the caller's: two valid slots, aligned to the pair's size;
    // `bytes` are the pair's 4 or 8 bytes, read unaligned.
    unsafe {
        if core::mem::size_of::<[T; 2]>() == 4 {
            element
                .cast::<u32>()
                .write(bytes.cast::<u32>().read_unaligned())
        } else {
            element
                .cast::<u64>()
                .write(bytes.cast::<u64>().read_unaligned())
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn idle_warp(warp: usize, owning: usize) -> ! {
    panic!("WarpTileItems::mine: warp {warp} is one of the map's idle warps (warps {owning} and up own no element of the output)")
}

#[cold]
#[inline(never)]
#[track_caller]
fn tile_out_of_range(i: usize, j: usize, tm: usize, tn: usize) -> ! {
    panic!("set_accumulator: tile ({i}, {j}) is outside the warp's {tm} × {tn} tiles")
}

#[cfg(test)]
mod tests {
    use super::grouped_tile;

    #[test]
    fn the_grouped_order_names_each_tile_once() {
        for (tiles_m, tiles_n, group) in [(1, 1, 8), (5, 3, 2), (17, 4, 8), (3, 7, 8), (9, 9, 1)] {
            let mut seen = vec![0; tiles_m * tiles_n];
            for t in 0..tiles_m * tiles_n + 20 {
                let (m, n) = grouped_tile(t, tiles_m, tiles_n, group);
                if m < tiles_m && n < tiles_n {
                    seen[m * tiles_n + n] += 1;
                } else {
                    assert!(
                        t >= tiles_m * tiles_n,
                        "tile {t} of {tiles_m} × {tiles_n} fell outside"
                    );
                }
            }
            assert!(
                seen.iter().all(|&s| s == 1),
                "{tiles_m} × {tiles_n} / {group}: {seen:?}"
            );
        }
    }
}
