//! Warp and block collectives: reductions and scans for the built-in
//! operations and for closures, one value per thread, written at the
//! thread's index. The tests compute the same per warp and per block on the
//! host.

use gpu_device::collective::{Arithmetic, BitOr, BitXor, Max, Min, Sum};
use gpu_device::prelude::*;
use gpu_device::shared::{
    block_broadcast, block_exclusive_scan, block_exclusive_sum, block_inclusive_scan,
    block_inclusive_sum, block_reduce, ReduceElement,
};
use gpu_device::warp;

/// Per thread, over its warp: `[sum, min, max, inclusive sum, exclusive
/// sum, exclusive scan with max from 0]` in `out[6 i ..]`. Launch
/// one-dimensional; threads past `input` contribute [`Arithmetic::ZERO`].
#[kernel(u32, i32, f32, u64, i64, f64)]
pub fn warp_collectives<T: Arithmetic + DeviceCopy>(input: &[T], mut out: DisjointSlice<[T; 6]>) {
    let i = thread_index();
    let v = input.get(i.get()).copied().unwrap_or(T::ZERO);
    let results = [
        warp::sum(v),
        warp::reduce(v, Min),
        warp::reduce(v, Max),
        warp::inclusive_sum(v),
        warp::exclusive_sum(v),
        warp::exclusive_scan(v, T::ZERO, Max),
    ];
    out.set(i, results);
}

/// Per thread, over its warp, with closures the collectives cannot know
/// (so shuffles, and order): `[first lane's value (reduce by "keep the
/// earlier"), last lane's value (reduce by "keep the later"), inclusive
/// scan of "keep the later" (its own value), exclusive scan of "keep the
/// later" from `u32::MAX` (the previous lane's value), bitwise or, bitwise
/// xor]`.
#[kernel]
pub fn warp_order(input: &[u32], mut out: DisjointSlice<[u32; 6]>) {
    let i = thread_index();
    let v = input.get(i.get()).copied().unwrap_or(0);
    let results = [
        warp::reduce(v, |a, _| a),
        warp::reduce(v, |_, b| b),
        warp::inclusive_scan(v, |_, b| b),
        warp::exclusive_scan(v, u32::MAX, |_, b| b),
        warp::reduce(v, BitOr),
        warp::reduce(v, BitXor),
    ];
    out.set(i, results);
}

/// Composes affine maps `x -> a x + b` (wrapping, `a` in the high and `b`
/// in the low 32 bits), the earlier applied first: associative, not
/// commutative. Per thread: `[warp reduce, warp inclusive scan, warp
/// exclusive scan from the identity, block reduce, block inclusive scan,
/// block exclusive scan from the identity]`.
#[kernel]
pub fn affine_compositions(input: &[u64], mut out: DisjointSlice<[u64; 6]>, block: Block) {
    fn compose(first: u64, then: u64) -> u64 {
        let (a1, b1) = ((first >> 32) as u32, first as u32);
        let (a2, b2) = ((then >> 32) as u32, then as u32);
        let a = a2.wrapping_mul(a1);
        let b = a2.wrapping_mul(b1).wrapping_add(b2);
        (a as u64) << 32 | b as u64
    }
    const IDENTITY: u64 = 1 << 32;
    let i = thread_index();
    let v = input.get(i.get()).copied().unwrap_or(IDENTITY);
    let warp_reduce = warp::reduce(v, compose);
    let warp_inclusive = warp::inclusive_scan(v, compose);
    let warp_exclusive = warp::exclusive_scan(v, IDENTITY, compose);
    let (r, block_total) = block_reduce(block, v, compose);
    let (r, inclusive) = block_inclusive_scan(r.sync(), v, compose);
    let (_r, exclusive) = block_exclusive_scan(r.sync(), v, IDENTITY, compose);
    out.set(
        i,
        [
            warp_reduce,
            warp_inclusive,
            warp_exclusive,
            block_total,
            inclusive.value,
            exclusive.value,
        ],
    );
}

/// Per thread, over its block: `[sum, min, max, inclusive sum, exclusive
/// sum, the block's sum from the scan, exclusive scan with max from 0,
/// thread 0's value by broadcast]`. One-dimensional launches; threads past
/// `input` contribute [`Arithmetic::ZERO`].
#[kernel(u32, i32, f32, u64, i64, f64)]
pub fn block_collectives<T: Arithmetic + ReduceElement + DeviceCopy>(
    input: &[T],
    mut out: DisjointSlice<[T; 8]>,
    block: Block,
) {
    let i = thread_index();
    let v = input.get(i.get()).copied().unwrap_or(T::ZERO);
    let (r, sum) = block_reduce(block, v, Sum);
    let (r, min) = block_reduce(r.sync(), v, Min);
    let (r, max) = block_reduce(r.sync(), v, Max);
    let (r, inclusive) = block_inclusive_sum(r.sync(), v);
    let (r, exclusive) = block_exclusive_sum(r.sync(), v);
    let (r, running_max) = block_exclusive_scan(r.sync(), v, T::ZERO, Max);
    let (_r, first) = block_broadcast(r.sync(), v);
    out.set(
        i,
        [
            sum,
            min,
            max,
            inclusive.value,
            exclusive.value,
            exclusive.total,
            running_max.value,
            first,
        ],
    );
}
