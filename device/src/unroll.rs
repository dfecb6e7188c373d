//! Loop unrolling where CUDA C writes `#pragma unroll`: the body copied
//! once per iteration, so that ptxas sees straight-line code (register
//! arrays stay in registers, indices become constants).
//!
//! - [`full::<N>(f)`](full): `f(0); f(1); ...; f(N - 1)`, written out for
//!   any `N` up to [`MAX_FULL`] (`#pragma unroll` over `0..N`);
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
pub const MAX_FULL: usize = 128;

/// `N` calls written out, for [`full`]. Implemented for `Times<0>` to
/// `Times<MAX_FULL>`.
pub trait Unrolled {
    #[doc(hidden)]
    fn run(f: &mut impl FnMut(usize), offset: usize);
}

/// The count `N` as a type, for [`Unrolled`].
pub enum Times<const N: usize> {}

macro_rules! unrolled {
    ($($n:literal: [$($i:literal)*]),* $(,)?) => {$(
        impl Unrolled for Times<$n> {
            #[inline(always)]
            #[allow(unused_variables)]
            fn run(f: &mut impl FnMut(usize), offset: usize) {
                $(f(offset + $i);)*
            }
        }
    )*};
}

// The calls `f(offset + 0) .. f(offset + N - 1)`, for each `N` up to 128.
macro_rules! counts {
    ($($n:literal)*) => {
        counts!(@acc [] $($n)*);
    };
    (@acc [$($done:literal)*] $next:literal $($rest:literal)*) => {
        unrolled!($next: [$($done)*]);
        counts!(@acc [$($done)* $next] $($rest)*);
    };
    (@acc [$($done:literal)*]) => {};
}

counts!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
    32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63
    64 65 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 82 83 84 85 86 87 88 89 90 91 92 93 94 95
    96 97 98 99 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 116 117 118 119 120
    121 122 123 124 125 126 127 128
);

/// `f(0); f(1); ...; f(N - 1)`, written out (`#pragma unroll` over a
/// constant range). `N` is at most [`MAX_FULL`].
#[inline(always)]
pub fn full<const N: usize>(mut f: impl FnMut(usize))
where
    Times<N>: Unrolled,
{
    <Times<N> as Unrolled>::run(&mut f, 0)
}

/// `f(i)` for each `i` of `range`, in order: `U` copies of the call per
/// round, then the last `len % U` one at a time (`#pragma unroll U`). `U`
/// is at least 1 and at most [`MAX_FULL`].
#[inline(always)]
pub fn by<const U: usize>(range: core::ops::Range<usize>, mut f: impl FnMut(usize))
where
    Times<U>: Unrolled,
{
    const { assert!(U >= 1, "unroll by at least 1") };
    let mut i = range.start;
    while range.end.saturating_sub(i) >= U {
        <Times<U> as Unrolled>::run(&mut f, i);
        i += U;
    }
    while i < range.end {
        f(i);
        i += 1;
    }
}

/// Unrolls a `for` loop over a range: `unroll!(for i in 0..N { ... })`
/// writes the body out `N` times ([`unroll::full`](crate::unroll::full); `N`
/// a constant up to 128), `unroll!(by U, for i in a..b { ... })` runs it in
/// groups of `U` copies ([`unroll::by`](crate::unroll::by)). `N`, `U`, `a`
/// and `b` are one token each (a literal, a name, or a parenthesised
/// expression). See [`unroll`](crate::unroll) for what the body may do.
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
