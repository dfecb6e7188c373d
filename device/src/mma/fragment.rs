//! The operand fragments `A` and `B`: each lane's registers of a tile, and
//! their loads from memory with the lane layout of the PTX ISA.

use super::{check_stride, group_and_index, NotSend, Operand};
use core::marker::PhantomData;

/// This lane's share of a 16 × K tile `A` (row-major), the first operand
/// of [`mma`](super::mma).
#[derive(Clone, Copy)]
pub struct FragmentA<T: Operand> {
    pub(super) regs: [u32; 4],
    _not_send: NotSend,
    _operand: PhantomData<T>,
}

impl<T: Operand> FragmentA<T> {
    #[inline(always)]
    pub(super) fn from_registers(regs: [u32; 4]) -> FragmentA<T> {
        FragmentA {
            regs,
            _not_send: PhantomData,
            _operand: PhantomData,
        }
    }

    /// Loads the 16 × K tile whose element `(row, col)` is
    /// `tile[row * row_stride + col]`. Every lane of the warp loads the same
    /// tile (its own elements of it). Panics when `row_stride < K` or the
    /// tile does not fit `tile`.
    #[track_caller]
    #[inline(always)]
    pub fn load(tile: &[T::Element], row_stride: usize) -> FragmentA<T> {
        check_stride("FragmentA::load", row_stride, T::K);
        Self::gather(|row, col| tile[row * row_stride + col])
    }

    /// The fragment of the tile whose element `(row, col)` is `at(row, col)`.
    #[inline(always)]
    pub(super) fn gather(at: impl Fn(usize, usize) -> T::Element) -> FragmentA<T> {
        let (g, t) = group_and_index();
        let mut regs = [0; 4];
        for (r, reg) in regs.iter_mut().enumerate() {
            // Registers 0 and 2: row g; 1 and 3: row g + 8. Registers 2 and
            // 3: the second half of K.
            let row = g + 8 * (r & 1);
            let col = T::PER_REGISTER * t + T::K / 2 * (r >> 1);
            *reg = T::register(|e| at(row, col + e));
        }
        Self::from_registers(regs)
    }
}

/// This lane's share of a K × 8 tile `B`, the second operand of
/// [`mma`](super::mma).
#[derive(Clone, Copy)]
pub struct FragmentB<T: Operand> {
    pub(super) regs: [u32; 2],
    _not_send: NotSend,
    _operand: PhantomData<T>,
}

impl<T: Operand> FragmentB<T> {
    #[inline(always)]
    pub(super) fn from_registers(regs: [u32; 2]) -> FragmentB<T> {
        FragmentB {
            regs,
            _not_send: PhantomData,
            _operand: PhantomData,
        }
    }

    /// Loads the K × 8 tile whose element `(k, n)` is
    /// `tile[n * col_stride + k]`: B column-major, that is `Bᵀ` row-major
    /// (8 rows of K), as `C = A Bᵀ` with both row-major reads it. Every
    /// lane of the warp loads the same tile. Panics when `col_stride < K`
    /// or the tile does not fit `tile`.
    #[track_caller]
    #[inline(always)]
    pub fn load(tile: &[T::Element], col_stride: usize) -> FragmentB<T> {
        check_stride("FragmentB::load", col_stride, T::K);
        Self::gather(|k, n| tile[n * col_stride + k])
    }

    /// Loads the K × 8 tile whose element `(k, n)` is
    /// `tile[k * row_stride + n]`: B row-major (K rows of 8), as `C = A B`
    /// with both row-major reads it. Panics when `row_stride < 8` or the
    /// tile does not fit `tile`.
    #[track_caller]
    #[inline(always)]
    pub fn load_rows(tile: &[T::Element], row_stride: usize) -> FragmentB<T> {
        check_stride("FragmentB::load_rows", row_stride, 8);
        Self::gather(|k, n| tile[k * row_stride + n])
    }

    /// The fragment of the tile whose element `(k, n)` is `at(k, n)`.
    #[inline(always)]
    pub(super) fn gather(at: impl Fn(usize, usize) -> T::Element) -> FragmentB<T> {
        let (g, t) = group_and_index();
        let mut regs = [0; 2];
        for (r, reg) in regs.iter_mut().enumerate() {
            // Column g; register 1: the second half of K.
            let k = T::PER_REGISTER * t + T::K / 2 * r;
            *reg = T::register(|e| at(k + e, g));
        }
        Self::from_registers(regs)
    }
}
