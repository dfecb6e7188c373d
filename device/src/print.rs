//! Formatted output from a kernel: [`print!`](crate::print!) and
//! [`println!`](crate::println!), over CUDA's `vprintf` (Numba's `print`,
//! CUDA C's `printf`).
//!
//! ```no_run
//! use gpu_device::prelude::*;
//! use gpu_device::println;
//!
//! // With `#[kernel]`:
//! pub fn show(x: &[f32], mut out: DisjointSlice<f32>) {
//!     let i = thread_index();
//!     if let Some(v) = x.get(i.get()) {
//!         println!("thread {} reads {:.3} (positive: {})", i.get(), v, *v > 0.0);
//!         out.set(i, *v);
//!     }
//! }
//! ```
//!
//! The format string is Rust's, turned into a C format string when the kernel
//! is compiled; the values travel in `vprintf`'s argument buffer, one 8-byte
//! slot each (integers widened to 64 bits, floats to `f64`), and booleans,
//! characters and strings are copied into the format itself. Each call is one
//! `vprintf`, so its line is never interleaved with another thread's. The
//! output reaches the host's standard output after the launch, when the
//! host synchronises with it, as CUDA's does; lines of different threads
//! come in no particular order on a GPU.
//!
//! What prints, and how:
//!
//! | placeholder | values | prints as C's |
//! |---|---|---|
//! | `{}`, `{:?}` | integers | `%lld` / `%llu` |
//! | `{:x}`, `{:X}`, `{:o}` | integers | `%llx`, `%llX`, `%llo` of the value's own width (`-1i32` is `ffffffff`, as in Rust) |
//! | `{}`, `{:?}` | `f32`, `f64`, [`f16`](struct@crate::f16), [`bf16`](crate::bf16) | `%g` (6 significant digits: Rust's shortest form has no C counterpart) |
//! | `{:.3}` | floats | `%.3f` (as Rust's) |
//! | `{:e}`, `{:E}` | floats | `%e`, `%E` (`1.500000e+00`, not Rust's `1.5e0`) |
//! | `{}` | `bool`, `char`, `&str` | the text itself; `{:?}` quotes a `char` or string |
//!
//! Widths, `<` and `>` alignment, `+`, `0` padding and `#` (`0x`, `0o`
//! prefixes; with a width, only zero-padded) apply as in Rust; centring
//! (`^`), fill characters, `{:b}` and widths or precisions taken from
//! arguments are compile errors, and so is a width or precision above 255. A
//! C printf prints `nan` and `inf` where Rust prints `NaN` and `inf`. One
//! call prints at most 32 values (CUDA's limit); strings (with booleans and
//! characters) add at most 256 bytes to a line, and are cut there.
//!
//! On the CPU simulator the same C format string and values are formatted by
//! the host's C library, as CUDA's host side formats them: each line is what
//! the GPU prints. A launch's lines are written to standard output when it
//! completes, block after block (in the order of the blocks' linear index),
//! in the order each block's threads printed them. To know which thread
//! printed a line, print its indices.

use crate::arch;

/// Kinds of placeholder, as the macros pass them to [`Print`].
pub mod kind {
    /// `{}`
    pub const DISPLAY: u8 = 0;
    /// `{:?}`
    pub const DEBUG: u8 = 1;
    /// `{:x}`
    pub const LOWER_HEX: u8 = 2;
    /// `{:X}`
    pub const UPPER_HEX: u8 = 3;
    /// `{:o}`
    pub const OCTAL: u8 = 4;
    /// `{:e}`
    pub const LOWER_EXP: u8 = 5;
    /// `{:E}`
    pub const UPPER_EXP: u8 = 6;
}

/// How many bytes strings, booleans and characters may add to one line.
pub const STRING_BUDGET: usize = 256;

/// The most values one call prints (CUDA's `printf` takes at most 32).
pub const MAX_VALUES: usize = 32;

/// A placeholder's options: `{:<+08.3}` and the like.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// `<`: left-aligned (C's `-`).
    pub left: bool,
    /// `>`: right-aligned (numbers are by default; text is not).
    pub right: bool,
    /// `+`: a sign also for positive numbers.
    pub plus: bool,
    /// `0`: zero-padded.
    pub zero: bool,
    /// `#`: a `0x` or `0o` prefix.
    pub alternate: bool,
    /// The width, if any (at most 255).
    pub width: Option<u8>,
    /// The precision, if any (at most 255).
    pub precision: Option<u8>,
}

/// A value a kernel can print under placeholder kind `KIND` (see [`kind`]).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be printed from a kernel with this placeholder",
    label = "not printable here",
    note = "kernels print integers, floats (`f32`, `f64`, `f16`, `bf16`), `bool`, `char` and `&str`; `{{:x}}`, `{{:X}}` and `{{:o}}` take integers, `{{:e}}` and `{{:E}}` floats"
)]
pub trait Print<const KIND: u8> {
    /// Appends this value under `spec` to the line being built.
    #[doc(hidden)]
    fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec);
}

impl<T: Print<KIND> + ?Sized, const KIND: u8> Print<KIND> for &T {
    #[inline(always)]
    fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
        (**self).print(line, spec)
    }
}

/// One line being built: a C format string of `F` bytes at most and up to
/// `A` values.
///
/// Safe to use in any order: every conversion it writes into the format is
/// written with its value (so the format never asks for more values than
/// the buffer holds, nor for a type the slot does not hold), literal text is
/// escaped (`%` as `%%`), and the format always ends with a NUL byte.
#[doc(hidden)]
pub struct Printer<const F: usize, const A: usize> {
    format: [u8; F],
    /// Bytes written, at most `F - 1` (room for the NUL).
    len: usize,
    args: [u64; A],
    count: usize,
    /// Bytes of strings still allowed ([`STRING_BUDGET`]).
    text_budget: usize,
}

impl<const F: usize, const A: usize> Default for Printer<F, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const F: usize, const A: usize> Printer<F, A> {
    /// An empty line.
    #[inline(always)]
    pub const fn new() -> Self {
        Printer {
            format: [0; F],
            len: 0,
            args: [0; A],
            count: 0,
            text_budget: STRING_BUDGET,
        }
    }

    /// Whether `extra` more bytes fit (with the NUL).
    #[inline(always)]
    fn room(&self, extra: usize) -> bool {
        self.len + extra < F
    }

    #[inline(always)]
    fn byte(&mut self, b: u8) {
        if self.room(1) {
            self.format[self.len] = b;
            self.len += 1;
        }
    }

    /// Appends literal text, `%` escaped and NUL bytes dropped.
    #[inline(always)]
    pub fn literal(&mut self, text: &str) {
        for &b in text.as_bytes() {
            match b {
                b'%' => {
                    if self.room(2) {
                        self.byte(b'%');
                        self.byte(b'%');
                    }
                }
                0 => {}
                _ => self.byte(b),
            }
        }
    }

    /// Appends text of a value (a string, `true`): as [`literal`](Self::literal),
    /// padded to `spec`'s width (left-aligned, as Rust aligns text, unless
    /// `>`), within the line's string budget.
    #[inline(always)]
    fn text(&mut self, text: &str, spec: Spec) {
        let chars = text.chars().count();
        let pad = spec.width.map_or(0, |w| (w as usize).saturating_sub(chars));
        if spec.right {
            self.padding(pad);
        }
        let mut used = 0;
        for c in text.chars() {
            let mut utf8 = [0; 4];
            let s = c.encode_utf8(&mut utf8);
            used += s.len();
            if used > self.text_budget {
                break;
            }
            self.literal(s);
        }
        self.text_budget = self.text_budget.saturating_sub(used);
        if !spec.right {
            self.padding(pad);
        }
    }

    #[inline(always)]
    fn padding(&mut self, n: usize) {
        let n = n.min(self.text_budget);
        self.text_budget -= n;
        for _ in 0..n {
            self.byte(b' ');
        }
    }

    /// Appends the decimal digits of `n`.
    #[inline(always)]
    fn number(&mut self, n: u8) {
        if n >= 100 {
            self.byte(b'0' + n / 100);
        }
        if n >= 10 {
            self.byte(b'0' + n / 10 % 10);
        }
        self.byte(b'0' + n % 10);
    }

    /// Appends one conversion (`%` flags width precision `conversion`) and
    /// its value, or nothing when the line is full.
    #[inline(always)]
    fn conversion(&mut self, spec: Spec, conversion: &str, value: u64) {
        // `%-+0#` 3 digits `.` 3 digits `ll` and the conversion letter.
        if self.count >= A || !self.room(16) {
            return;
        }
        self.byte(b'%');
        if spec.left {
            self.byte(b'-');
        }
        if spec.plus {
            self.byte(b'+');
        }
        if spec.zero && !spec.left {
            self.byte(b'0');
        }
        if let Some(w) = spec.width {
            self.number(w);
        }
        if let Some(p) = spec.precision {
            self.byte(b'.');
            self.number(p);
        }
        for &b in conversion.as_bytes() {
            self.byte(b);
        }
        self.args[self.count] = value;
        self.count += 1;
    }

    /// A decimal integer: `%lld` of a signed value, `%llu` of an unsigned
    /// one, except that Rust's `+` also signs unsigned values (C's `%+llu`
    /// does not): those below 2^63 go through `%+lld`.
    #[inline(always)]
    fn decimal(&mut self, spec: Spec, conversion: &str, value: u64) {
        if spec.plus && conversion == "llu" {
            if value <= i64::MAX as u64 {
                self.conversion(spec, "lld", value);
            } else {
                self.literal("+");
                let width = spec.width.map(|w| w.saturating_sub(1));
                self.conversion(
                    Spec {
                        plus: false,
                        width,
                        ..spec
                    },
                    conversion,
                    value,
                );
            }
        } else {
            self.conversion(spec, conversion, value);
        }
    }

    /// Prints the line: `vprintf` on the GPU; on the simulator, the line
    /// formatted by the host's C library and kept with the launch's output.
    #[inline(always)]
    pub fn emit(mut self) {
        if F == 0 {
            return;
        }
        // `len < F` always (`room` keeps a byte for the NUL).
        let end = self.len.min(F - 1);
        self.format[end] = 0;
        arch::print(&self.format[..=end], &self.args[..self.count]);
    }

    /// The C format string written so far (without its NUL) and the values.
    #[doc(hidden)]
    pub fn parts(&self) -> (&[u8], &[u64]) {
        (&self.format[..self.len], &self.args[..self.count])
    }
}

/// Integers print through `%lld`/`%llu` (`{}`, `{:?}`) and `%llx`, `%llX`,
/// `%llo` of their own width.
macro_rules! print_integer {
    ($($t:ty => $unsigned:ty, $decimal:literal, $wide:ty;)*) => {$(
        impl Print<{ kind::DISPLAY }> for $t {
            #[inline(always)]
            fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
                line.decimal(spec, $decimal, *self as $wide as u64);
            }
        }
        impl Print<{ kind::DEBUG }> for $t {
            #[inline(always)]
            fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
                line.decimal(spec, $decimal, *self as $wide as u64);
            }
        }
        print_integer!(@radix $t, $unsigned, LOWER_HEX, "llx", "0x");
        print_integer!(@radix $t, $unsigned, UPPER_HEX, "llX", "0x");
        print_integer!(@radix $t, $unsigned, OCTAL, "llo", "0o");
    )*};
    (@radix $t:ty, $unsigned:ty, $kind:ident, $conversion:literal, $prefix:literal) => {
        impl Print<{ kind::$kind }> for $t {
            #[inline(always)]
            fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, mut spec: Spec) {
                if spec.alternate {
                    // Rust's prefix (C's `#` prints none for 0, and `0` for octal).
                    line.literal($prefix);
                    spec.width = spec.width.map(|w| w.saturating_sub(2));
                }
                line.conversion(spec, $conversion, *self as $unsigned as u64);
            }
        }
    };
}

print_integer! {
    i8 => u8, "lld", i64;
    i16 => u16, "lld", i64;
    i32 => u32, "lld", i64;
    i64 => u64, "lld", i64;
    isize => usize, "lld", i64;
    u8 => u8, "llu", u64;
    u16 => u16, "llu", u64;
    u32 => u32, "llu", u64;
    u64 => u64, "llu", u64;
    usize => usize, "llu", u64;
}

/// A float's `f64` bits under `{}` (`%g`, or `%.Nf` with a precision),
/// `{:e}` and `{:E}`.
#[inline(always)]
pub(crate) fn print_float<const F: usize, const A: usize>(
    line: &mut Printer<F, A>,
    spec: Spec,
    kind: u8,
    value: f64,
) {
    let conversion = match kind {
        kind::LOWER_EXP => "e",
        kind::UPPER_EXP => "E",
        _ if spec.precision.is_some() => "f",
        _ => "g",
    };
    line.conversion(spec, conversion, value.to_bits());
}

macro_rules! print_float {
    ($($t:ty),*) => {$(
        print_float!(@kind $t, DISPLAY, DEBUG, LOWER_EXP, UPPER_EXP);
    )*};
    (@kind $t:ty, $($kind:ident),*) => {$(
        impl Print<{ kind::$kind }> for $t {
            #[inline(always)]
            fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
                print_float(line, spec, kind::$kind, f64::from(*self));
            }
        }
    )*};
}
print_float!(f32, f64);

impl Print<{ kind::DISPLAY }> for bool {
    #[inline(always)]
    fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
        line.text(if *self { "true" } else { "false" }, spec);
    }
}

impl Print<{ kind::DEBUG }> for bool {
    #[inline(always)]
    fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
        line.text(if *self { "true" } else { "false" }, spec);
    }
}

impl Print<{ kind::DISPLAY }> for str {
    #[inline(always)]
    fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
        line.text(self, spec);
    }
}

impl Print<{ kind::DEBUG }> for str {
    #[inline(always)]
    fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
        line.text(
            "\"",
            Spec {
                width: None,
                ..spec
            },
        );
        line.text(
            self,
            Spec {
                width: None,
                ..spec
            },
        );
        line.text(
            "\"",
            Spec {
                width: None,
                ..spec
            },
        );
    }
}

impl Print<{ kind::DISPLAY }> for char {
    #[inline(always)]
    fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
        let mut utf8 = [0; 4];
        line.text(self.encode_utf8(&mut utf8), spec);
    }
}

impl Print<{ kind::DEBUG }> for char {
    #[inline(always)]
    fn print<const F: usize, const A: usize>(&self, line: &mut Printer<F, A>, spec: Spec) {
        let mut quoted = [b'\''; 6];
        let len = self.encode_utf8(&mut quoted[1..5]).len();
        quoted[len + 1] = b'\'';
        let text = core::str::from_utf8(&quoted[..len + 2]).unwrap_or("'?'");
        line.text(text, spec);
    }
}
