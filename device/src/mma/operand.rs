//! The operand types of the `mma.sync` shapes, and how a lane packs its
//! operand elements into the 32-bit registers the instruction takes.

use crate::arch;
use crate::half::{bf16, f16};

mod sealed {
    pub trait Sealed {}
}

/// The operands' type of an `mma.sync` shape: [`Bf16`] and [`F16`]
/// (m16n8k16), [`Tf32`] (m16n8k8). Sealed.
///
/// A register holds [`PER_REGISTER`](Self::PER_REGISTER) consecutive
/// elements along K: two 16-bit halves (low first), or one tf32.
pub trait Operand: sealed::Sealed + Copy {
    /// The type of the tiles' elements in memory.
    type Element: Copy;
    /// The shape's K: A is 16 × K, B is K × 8.
    const K: usize;
    /// Elements per 32-bit register: 2 for 16-bit operands, 1 for tf32.
    const PER_REGISTER: usize;
    /// The register holding elements `element(0) .. element(PER_REGISTER)`.
    #[doc(hidden)]
    fn register(element: impl Fn(usize) -> Self::Element) -> u32;
    #[doc(hidden)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4];
}

/// The 16-bit operands ([`Bf16`], [`F16`]), which `ldmatrix` loads from
/// shared memory. Sealed.
pub trait SixteenBit: Operand<Element: crate::shared::SharedElement> {}
impl SixteenBit for Bf16 {}
impl SixteenBit for F16 {}

/// bf16 operands, m16n8k16.
#[derive(Clone, Copy, Debug)]
pub struct Bf16;
/// f16 operands, m16n8k16.
#[derive(Clone, Copy, Debug)]
pub struct F16;
/// tf32 operands (from f32 tiles, rounded when loaded), m16n8k8.
#[derive(Clone, Copy, Debug)]
pub struct Tf32;

impl sealed::Sealed for Bf16 {}
impl sealed::Sealed for F16 {}
impl sealed::Sealed for Tf32 {}

impl Operand for Bf16 {
    type Element = bf16;
    const K: usize = 16;
    const PER_REGISTER: usize = 2;
    #[inline(always)]
    fn register(element: impl Fn(usize) -> bf16) -> u32 {
        element(0).to_bits() as u32 | (element(1).to_bits() as u32) << 16
    }
    #[inline(always)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
        arch::mma::m16n8k16_bf16(a, b, c)
    }
}

impl Operand for F16 {
    type Element = f16;
    const K: usize = 16;
    const PER_REGISTER: usize = 2;
    #[inline(always)]
    fn register(element: impl Fn(usize) -> f16) -> u32 {
        element(0).to_bits() as u32 | (element(1).to_bits() as u32) << 16
    }
    #[inline(always)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
        arch::mma::m16n8k16_f16(a, b, c)
    }
}

impl Operand for Tf32 {
    type Element = f32;
    const K: usize = 8;
    const PER_REGISTER: usize = 1;
    #[inline(always)]
    fn register(element: impl Fn(usize) -> f32) -> u32 {
        arch::mma::to_tf32(element(0))
    }
    #[inline(always)]
    fn mma(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
        arch::mma::m16n8k8_tf32(a, b, c)
    }
}
