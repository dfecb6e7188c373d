//! A tensor map as a kernel parameter: [`TensorMapNd<T, B, S>`](TensorMapNd),
//! a map of elements `T` copied in boxes of shape `B` ([`Box1d`] to
//! [`Box5d`]) swizzled by `S`; [`TensorMap2d`] names the 2-D one by its rows
//! and columns.
//!
//! A box's type parameters are its extents *outermost first*, as an array
//! `[[[T; C]; R]; D]` is written (`Box3d<D, R, C>`: `D` planes of `R` rows
//! of `C` elements), and so are the coordinates a copy takes and the
//! indices a landed tile reads; the host's `TensorMapLayout` lists
//! dimensions innermost first, as the driver does.

use super::{sealed, NoSwizzle, TileSwizzle};
use crate::arch;
use core::marker::PhantomData;

/// The shape of a TMA box: its rank and extents, fixed by the type, so that
/// a tile's bytes and the bytes its barrier expects come from the type.
/// Sealed: [`Box1d`], [`Box2d`], [`Box3d`], [`Box4d`], [`Box5d`].
pub trait BoxShape: sealed::Sealed {
    /// The number of dimensions, 1 to 5.
    const RANK: usize;
    /// The extents, innermost first, 1 past the rank.
    const DIMS: [u32; 5];
    /// The box's coordinates in the tensor, outermost first (`[i32; RANK]`).
    type Coords: Copy;
    /// An element's index in the box, outermost first (`[usize; RANK]`).
    type Index: Copy;
    /// `coords` innermost first, 0 past the rank.
    #[doc(hidden)]
    fn coords_inner_first(coords: Self::Coords) -> [i32; 5];
    /// `index` innermost first, 0 past the rank.
    #[doc(hidden)]
    fn index_inner_first(index: Self::Index) -> [usize; 5];
    /// Coordinates given innermost first, outermost first.
    #[doc(hidden)]
    fn coords_from_inner_first(coords: [i32; 5]) -> Self::Coords;
    /// An index given innermost first, outermost first.
    #[doc(hidden)]
    fn index_from_inner_first(index: [usize; 5]) -> Self::Index;
}

macro_rules! box_shapes {
    ($($(#[$doc:meta])* $name:ident < $($d:ident),+ > rank $rank:literal;)*) => {$(
        $(#[$doc])*
        pub enum $name<$(const $d: usize),+> {}
        impl<$(const $d: usize),+> sealed::Sealed for $name<$($d),+> {}
        impl<$(const $d: usize),+> BoxShape for $name<$($d),+> {
            const RANK: usize = $rank;
            const DIMS: [u32; 5] = {
                let outer_first = [$($d as u32),+];
                let mut dims = [1u32; 5];
                let mut i = 0;
                while i < $rank {
                    dims[i] = outer_first[$rank - 1 - i];
                    i += 1;
                }
                dims
            };
            type Coords = [i32; $rank];
            type Index = [usize; $rank];
            #[inline(always)]
            fn coords_inner_first(coords: [i32; $rank]) -> [i32; 5] {
                let mut out = [0; 5];
                let mut i = 0;
                while i < $rank {
                    out[i] = coords[$rank - 1 - i];
                    i += 1;
                }
                out
            }
            #[inline(always)]
            fn index_inner_first(index: [usize; $rank]) -> [usize; 5] {
                let mut out = [0; 5];
                let mut i = 0;
                while i < $rank {
                    out[i] = index[$rank - 1 - i];
                    i += 1;
                }
                out
            }
            #[inline(always)]
            fn coords_from_inner_first(coords: [i32; 5]) -> [i32; $rank] {
                let mut out = [0; $rank];
                let mut i = 0;
                while i < $rank {
                    out[i] = coords[$rank - 1 - i];
                    i += 1;
                }
                out
            }
            #[inline(always)]
            fn index_from_inner_first(index: [usize; 5]) -> [usize; $rank] {
                let mut out = [0; $rank];
                let mut i = 0;
                while i < $rank {
                    out[i] = index[$rank - 1 - i];
                    i += 1;
                }
                out
            }
        }
    )*};
}

box_shapes! {
    /// A 1-D box of `X` elements.
    Box1d<X> rank 1;
    /// A 2-D box of `ROWS` rows of `COLS` elements.
    Box2d<ROWS, COLS> rank 2;
    /// A 3-D box, outermost first: `D2` planes of `D1` rows of `D0` elements.
    Box3d<D2, D1, D0> rank 3;
    /// A 4-D box, outermost first.
    Box4d<D3, D2, D1, D0> rank 4;
    /// A 5-D box, outermost first.
    Box5d<D4, D3, D2, D1, D0> rank 5;
}

/// The shape of a kernel's tensor map parameter, for its launcher to check
/// the host map against (and for the tile's type).
pub trait TensorMapShape {
    /// The element type.
    type Element;
    /// The number of dimensions.
    const RANK: usize;
    /// The box's extents, innermost first.
    const BOX: [u32; 5];
    /// `CUtensorMapSwizzle`.
    const SWIZZLE: u32;
}
/// A map parameter's types, as a `PhantomData`: `T` only through `fn() -> T`
/// (a map is `Send` and `Sync` whatever `T` is; it never holds one).
pub(crate) type MapTypes<T, B, S> = (fn() -> T, B, S);

/// A tensor map as a kernel parameter: elements `T` copied in boxes of
/// shape `B` (its rank the map's), swizzled by `S`. The launcher takes a
/// `&gpu_runtime::TensorMap<'_, T>` of that rank, box and swizzle (checked
/// at launch, an error naming the parameter).
///
/// It holds the generic address of the map's encoded `CUtensorMap` in
/// global memory (64-byte aligned), not the map itself: CUDA C passes it
/// as a `__grid_constant__` parameter, but rustc's NVPTX backend copies a
/// by-value aggregate whose address is taken into local memory, which the
/// copy engine cannot read. PTX's `cp.async.bulk.tensor` (ISA 8.0) takes
/// the tensor map's generic address, and the ISA's tensor-map section lets
/// the object reside in the `.param`, `.const` or `.global` space. The
/// host writes it when the map is made, and the write completes before
/// `TensorMap::new` returns, before any launch that takes the map (which
/// also tracks it as a buffer the kernel reads, and keeps it alive for the
/// kernel). The copy engine caches descriptors by address, though, and the
/// runtime's memory pool gives a dropped map's address to the next one: so
/// each thread acquires the map for the tensor-map proxy at the kernel's
/// start (`fence.proxy.tensormap::generic.acquire.sys`, which the CUDA
/// programming guide asks for after a host copy into a map in global
/// memory). Without it, a kernel copied with the descriptor of an earlier
/// map at the same address (an H200 ended `tma_box_f32`, a box of 2048
/// bytes, with `CUDA_ERROR_ILLEGAL_INSTRUCTION` after kernels copied 8192
/// bytes through maps the pool had placed there).
pub struct TensorMapNd<T, B: BoxShape, S: TileSwizzle = NoSwizzle> {
    pub(crate) map: *const u64,
    _element: PhantomData<MapTypes<T, B, S>>,
}

/// A 2-D tensor map as a kernel parameter: a row-major matrix of `T`
/// copied in boxes of `ROWS` rows of `COLS` elements, swizzled by `S` (see
/// [`TensorMapNd`]).
pub type TensorMap2d<T, const ROWS: usize, const COLS: usize, S = NoSwizzle> =
    TensorMapNd<T, Box2d<ROWS, COLS>, S>;

impl<T, B: BoxShape, S: TileSwizzle> Clone for TensorMapNd<T, B, S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, B: BoxShape, S: TileSwizzle> Copy for TensorMapNd<T, B, S> {}

impl<T, B: BoxShape, S: TileSwizzle> TensorMapShape for TensorMapNd<T, B, S> {
    type Element = T;
    const RANK: usize = B::RANK;
    const BOX: [u32; 5] = B::DIMS;
    const SWIZZLE: u32 = S::MODE;
}

impl<T, B: BoxShape, S: TileSwizzle> TensorMapNd<T, B, S> {
    /// The parameter, from its PTX parameter.
    ///
    /// # Safety
    /// `map` is the address of an encoded tensor map of `T` in global
    /// memory (on the simulator, its simulated encoding), 64-byte aligned,
    /// of a live buffer, whose rank and box are `B`'s with swizzle `S`, not
    /// written during the launch: what the launcher passes. Each thread
    /// calls it at the kernel's start (it acquires the map for the copy
    /// engine, see the type's documentation).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_kernel_param(map: *const T) -> Self {
        // SAFETY: the caller's contract: 128 bytes of a map in global
        // memory.
        unsafe { arch::tma::fence_tensormap_acquire(map.cast()) };
        TensorMapNd {
            map: map.cast(),
            _element: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_list_their_extents_innermost_first() {
        assert_eq!(<Box1d<64>>::DIMS, [64, 1, 1, 1, 1]);
        assert_eq!(<Box2d<16, 32>>::DIMS, [32, 16, 1, 1, 1]);
        assert_eq!(<Box3d<2, 8, 16>>::DIMS, [16, 8, 2, 1, 1]);
        assert_eq!(<Box5d<5, 4, 3, 2, 8>>::DIMS, [8, 2, 3, 4, 5]);
        assert_eq!(
            <Box3d<2, 8, 16>>::coords_inner_first([1, 2, 3]),
            [3, 2, 1, 0, 0]
        );
        assert_eq!(
            <Box4d<1, 1, 1, 1>>::index_inner_first([4, 3, 2, 1]),
            [1, 2, 3, 4, 0]
        );
        assert_eq!(
            <Box3d<2, 8, 16>>::coords_from_inner_first([3, 2, 1, 0, 0]),
            [1, 2, 3]
        );
        assert_eq!(<Box1d<8>>::index_from_inner_first([5, 0, 0, 0, 0]), [5]);
        assert_eq!(<TensorMap2d<f32, 16, 32> as TensorMapShape>::RANK, 2);
    }
}
