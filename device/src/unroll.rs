//! Loop unrolling where CUDA C writes `#pragma unroll`: the body copied
//! once per iteration, so that ptxas sees straight-line code (register
//! arrays stay in registers, indices become constants).
//!
//! - [`full::<N>(f)`](full): `f(0); f(1); ...; f(N - 1)`, written out for
//!   any `N` up to [`MAX_FULL`], a const generic parameter included
//!   (`#pragma unroll` over `0..N`);
//! - [`by::<U>(range, f)`](by): the range in groups of `U` copies of the
//!   body, then the rest one at a time (`#pragma unroll U`).
//!
//! The [`unroll!`](crate::unroll!) macro writes either as a `for` loop:
//!
//! ```no_run
//! use gpu_device::unroll;
//!
//! fn dot5(w: &[f32; 5], x: &[f32; 5]) -> f32 {
//!     let mut acc = 0.0;
//!     unroll!(for i in 0..5 {
//!         acc += w[i] * x[i];
//!     });
//!     acc
//! }
//!
//! fn scale(v: &mut [f32], k: f32) {
//!     let n = v.len();
//!     unroll!(by 4, for i in 0..n {
//!         v[i] *= k;
//!     });
//! }
//! ```
//!
//! The body is a closure, called with each index: it may read and change
//! the enclosing function's locals, but not `break`, `continue` or `return`
//! from it. Each call is `#[inline(always)]`'s, so after inlining every copy
//! has its own constant index. Unrolling changes no result: the calls are
//! made in order.

/// The largest `N` that [`full`] writes out.
pub const MAX_FULL: usize = 255;

// `f(offset) .. f(offset + 2^k - 1)` written out, each from two of the
// half size.
macro_rules! doubled {
    ($one:ident; $($half:ident => $name:ident: $n:literal),*) => {
        #[inline(always)]
        fn $one(f: &mut impl FnMut(usize), offset: usize) {
            f(offset)
        }
        $(
            #[inline(always)]
            fn $name(f: &mut impl FnMut(usize), offset: usize) {
                $half(f, offset);
                $half(f, offset + $n / 2);
            }
        )*
    };
}
doubled!(run1; run1 => run2: 2, run2 => run4: 4, run4 => run8: 8, run8 => run16: 16,
    run16 => run32: 32, run32 => run64: 64, run64 => run128: 128);

/// `f(offset) .. f(offset + N - 1)` written out: the powers of two of `N`,
/// largest first, each a constant test that folds away.
#[inline(always)]
fn run<const N: usize>(f: &mut impl FnMut(usize), mut offset: usize) {
    const { assert!(N <= MAX_FULL, "unroll! writes out at most 255 copies") };
    if N & 128 != 0 {
        run128(f, offset);
        offset += 128;
    }
    if N & 64 != 0 {
        run64(f, offset);
        offset += 64;
    }
    if N & 32 != 0 {
        run32(f, offset);
        offset += 32;
    }
    if N & 16 != 0 {
        run16(f, offset);
        offset += 16;
    }
    if N & 8 != 0 {
        run8(f, offset);
        offset += 8;
    }
    if N & 4 != 0 {
        run4(f, offset);
        offset += 4;
    }
    if N & 2 != 0 {
        run2(f, offset);
        offset += 2;
    }
    if N & 1 != 0 {
        run1(f, offset);
    }
}

/// `f(0); f(1); ...; f(N - 1)`, written out (`#pragma unroll` over a
/// constant range). `N` is at most [`MAX_FULL`] (a compile error
/// otherwise); it may be a const generic parameter, with no bound to
/// state.
#[inline(always)]
pub fn full<const N: usize>(mut f: impl FnMut(usize)) {
    run::<N>(&mut f, 0)
}

/// `f(i)` for each `i` of `range`, in order: `U` copies of the call per
/// round, then the last `len % U` one at a time (`#pragma unroll U`). `U`
/// is at least 1 and at most [`MAX_FULL`].
#[inline(always)]
pub fn by<const U: usize>(range: core::ops::Range<usize>, mut f: impl FnMut(usize)) {
    const { assert!(U >= 1, "unroll by at least 1") };
    let mut i = range.start;
    while range.end.saturating_sub(i) >= U {
        run::<U>(&mut f, i);
        i += U;
    }
    while i < range.end {
        f(i);
        i += 1;
    }
}

/// Unrolls a `for` loop over a range: `unroll!(for i in 0..N { ... })`
/// writes the body out `N` times ([`unroll::full`](crate::unroll::full); `N`
/// a constant up to 255), `unroll!(by U, for i in a..b { ... })` runs it in
/// groups of `U` copies ([`unroll::by`](crate::unroll::by)). `N`, `U`, `a`
/// and `b` are one token each (a literal, a name, or a parenthesised
/// expression). See [`unroll`](mod@crate::unroll) for what the body may do.
#[macro_export]
macro_rules! unroll {
    (for $i:pat in 0..$n:tt $body:block) => {
        $crate::unroll::full::<{ $n }>(|$i: usize| $body)
    };
    (by $u:tt, for $i:pat in $start:tt..$end:tt $body:block) => {
        $crate::unroll::by::<{ $u }>(($start)..($end), |$i: usize| $body)
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_index_is_visited_once_in_order() {
        let mut seen = Vec::new();
        super::full::<7>(|i| seen.push(i));
        assert_eq!(seen, (0..7).collect::<Vec<_>>());
        for end in [0usize, 1, 3, 4, 5, 9, 130] {
            for start in [0usize, 2] {
                let mut seen = Vec::new();
                super::by::<4>(start..end, |i| seen.push(i));
                assert_eq!(seen, (start..end).collect::<Vec<_>>(), "{start}..{end}");
            }
        }
        let mut sum = 0;
        crate::unroll!(for i in 0..128 {
            sum += i;
        });
        assert_eq!(sum, 127 * 64);
        let n = 10;
        crate::unroll!(by 3, for i in 2..n {
            sum -= i;
        });
        assert_eq!(sum, 127 * 64 - (2..10).sum::<usize>());
    }
}
