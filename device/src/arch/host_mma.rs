//! The simulator's `mma.sync`: each lane fetches the operand registers its
//! own elements of D need through the warp exchange (so a lane that does not
//! take part is reported as for any warp function, never a hang), rebuilds
//! its rows of A and columns of B with the fragment layouts of the PTX ISA,
//! and computes its elements of D: products exact (bf16, f16 and tf32
//! operands all fit an f64 product), summed in f64 and rounded to f32 once.

use super::host::{lane_id, shuffle};
use super::ShuffleMode;

/// The operands' type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operands {
    Bf16,
    F16,
    Tf32,
}

/// `N` words from other lanes, one warp shuffle each: in shuffle `i` every
/// lane sends its register `from(i).1` and receives that of lane
/// `from(i).0` (its own choice; the register is the same for every lane).
fn fetch<const R: usize, const N: usize>(
    regs: [u32; R],
    from: impl Fn(usize) -> (usize, usize),
) -> [u32; N] {
    std::array::from_fn(|i| {
        let (lane, reg) = from(i);
        shuffle(ShuffleMode::Index, u32::MAX, regs[reg], lane as u32)
    })
}

/// The value of a 16-bit operand.
fn half(kind: Operands, bits: u16) -> f64 {
    match kind {
        Operands::Bf16 => f32::from_bits((bits as u32) << 16) as f64,
        _ => crate::half::f16::from_bits(bits).to_f64(),
    }
}

/// This lane's four elements of `D = A B + C`. Lane `(g, t)`, where
/// `g = lane / 4` and `t = lane % 4`, holds D's rows `g` and `g + 8`,
/// columns `2t` and `2t + 1`: it fetches only A's two rows (registers 0 to
/// 3 of lanes `4g` to `4g + 3`) and B's two columns (registers 0 and 1 of
/// the lanes of groups `2t` and `2t + 1`), 32 shuffles. (Gathering every
/// lane's registers took 192, each a round of the whole warp on the
/// simulator.)
fn mma(kind: Operands, a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    let lane = lane_id() as usize;
    let (g, t) = (lane / 4, lane % 4);
    // Shuffle i: A's register i % 4 of lane 4g + i / 4.
    let a_words: [u32; 16] = fetch(a, |i| (4 * g + i / 4, i % 4));
    // Shuffle i: B's register i % 2 of lane 4(2t + i / 8) + (i / 2) % 4.
    let b_words: [u32; 16] = fetch(b, |i| (4 * (2 * t + i / 8) + (i / 2) % 4, i % 2));
    let k = if kind == Operands::Tf32 { 8 } else { 16 };
    // Rows g and g + 8 of A; columns 2t and 2t + 1 of B.
    let mut am = [[0f64; 16]; 2];
    let mut bm = [[0f64; 2]; 16];
    for (i, &word) in a_words.iter().enumerate() {
        let (from_t, r) = (i / 4, i % 4);
        let row = r & 1;
        if kind == Operands::Tf32 {
            am[row][from_t + 4 * (r >> 1)] = f32::from_bits(word) as f64;
        } else {
            let col = 2 * from_t + 8 * (r >> 1);
            am[row][col] = half(kind, word as u16);
            am[row][col + 1] = half(kind, (word >> 16) as u16);
        }
    }
    for (i, &word) in b_words.iter().enumerate() {
        let (col, from_t, r) = (i / 8, (i / 2) % 4, i % 2);
        if kind == Operands::Tf32 {
            bm[from_t + 4 * r][col] = f32::from_bits(word) as f64;
        } else {
            let kk = 2 * from_t + 8 * r;
            bm[kk][col] = half(kind, word as u16);
            bm[kk + 1][col] = half(kind, (word >> 16) as u16);
        }
    }
    let mut d = [0f32; 4];
    for (r, out) in d.iter_mut().enumerate() {
        let (row, col) = (r >> 1, r & 1);
        let sum: f64 = (0..k).map(|kk| am[row][kk] * bm[kk][col]).sum();
        *out = (c[r] as f64 + sum) as f32;
    }
    d
}

/// `D = A B + C`, m16n8k16, bf16 operands.
pub(crate) fn m16n8k16_bf16(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    mma(Operands::Bf16, a, b, c)
}

/// `D = A B + C`, m16n8k16, f16 operands.
pub(crate) fn m16n8k16_f16(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    mma(Operands::F16, a, b, c)
}

/// `D = A B + C`, m16n8k8, tf32 operands.
pub(crate) fn m16n8k8_tf32(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    mma(Operands::Tf32, a, b, c)
}

/// `x` rounded to tf32 as `cvt.rna.tf32.f32` does: to nearest, ties away
/// from zero, keeping 10 bits of significand (the low 13 bits zero); NaN and
/// the infinities unchanged.
pub(crate) fn to_tf32(x: f32) -> u32 {
    let bits = x.to_bits();
    if !x.is_finite() {
        return bits;
    }
    // Adding half of the last kept bit's weight to the magnitude rounds ties
    // away from zero (a carry into the exponent is the right result, up to
    // infinity).
    (bits.wrapping_add(1 << 12)) & !0x1fff
}

/// Every address is "global" on the simulator (its device memory is host
/// memory); the ring's other checks still apply.
pub(crate) fn is_global<T>(_ptr: *const T) -> bool {
    true
}

/// The simulator's `cp.async`: the copy happens at once (a read before the
/// wait is a compile error in the safe API, so no kernel can tell).
///
/// # Safety
/// As on the GPU: `dst`, `dst_offset` bytes past `dst_base`, has 16
/// writable bytes, `src` `src_bytes <= 16` readable ones.
pub(crate) unsafe fn cp_async_16(
    dst_base: *mut u8,
    dst_offset: usize,
    src: *const u8,
    src_bytes: u32,
) {
    let n = src_bytes as usize;
    // SAFETY: the caller's contract; shared and device memory never overlap.
    unsafe {
        let dst = dst_base.add(dst_offset);
        core::ptr::copy_nonoverlapping(src, dst, n);
        core::ptr::write_bytes(dst.add(n), 0, 16 - n);
    }
}

/// Nothing to close: the copies are done.
pub(crate) fn cp_async_commit() {}

/// Nothing to wait for: the copies are done.
pub(crate) fn cp_async_wait(_pending: u32) {}

#[cfg(test)]
mod tests {
    use super::{cp_async_16, to_tf32};

    #[test]
    fn cp_async_copies_its_source_size_and_zero_fills_the_rest() {
        #[repr(align(16))]
        struct Chunk([u8; 16]);
        let src = Chunk(core::array::from_fn(|i| i as u8 + 1));
        let mut dst = Chunk([0xff; 16]);
        // SAFETY: 16 writable bytes at `dst`, 6 readable ones at `src`.
        unsafe { cp_async_16(dst.0.as_mut_ptr(), 0, src.0.as_ptr(), 6) };
        assert_eq!(dst.0, [1, 2, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        // A source size of 0 reads nothing: an address with no memory
        // behind it (as a GEMM's zero-filled chunks past a matrix name).
        let mut dst = Chunk([0xff; 16]);
        let nowhere = core::ptr::without_provenance::<u8>(16);
        // SAFETY: 16 writable bytes at `dst`; 0 bytes read at `nowhere`.
        unsafe { cp_async_16(dst.0.as_mut_ptr(), 0, nowhere, 0) };
        assert_eq!(dst.0, [0; 16]);
    }

    #[test]
    fn tf32_rounds_to_nearest_ties_away() {
        assert_eq!(to_tf32(1.0), 1.0f32.to_bits());
        // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: away from zero.
        assert_eq!(
            f32::from_bits(to_tf32(1.0 + 2f32.powi(-11))),
            1.0 + 2f32.powi(-10)
        );
        assert_eq!(
            f32::from_bits(to_tf32(-(1.0 + 2f32.powi(-11)))),
            -(1.0 + 2f32.powi(-10))
        );
        assert_eq!(f32::from_bits(to_tf32(1.0 + 2f32.powi(-12))), 1.0);
        assert_eq!(f32::from_bits(to_tf32(f32::MAX)), f32::INFINITY);
        assert!(f32::from_bits(to_tf32(f32::NAN)).is_nan());
    }
}
