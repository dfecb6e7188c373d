//! Elements aligned to 256 bytes, the most a `DeviceCopy` type may be
//! (`gpu_device::MAX_DEVICE_ALIGN`), in device buffers and views at element
//! offsets (directly and through a field) and in static and dynamic shared
//! memory; and a parameter by value aligned to 16, the most one may be
//! (`gpu_device::MAX_PARAMETER_ALIGN`).

use gpu_device::prelude::*;

/// 256 bytes aligned to 256: the largest alignment a `DeviceCopy` type may
/// have.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C, align(256))]
pub struct Line(pub [u32; 64]);

// SAFETY: 64 `u32`s with no padding (the alignment equals the size): every
// bit pattern is valid, all-zero included.
unsafe impl bytemuck::Zeroable for Line {}
// SAFETY: as above.
unsafe impl bytemuck::AnyBitPattern for Line {}

/// A struct aligned to 256 through a field (an array of [`Line`]).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Tagged {
    /// A value before the padding.
    pub tag: u32,
    /// The over-aligned field.
    pub lines: [Line; 1],
}

/// 4 KiB aligned to 4096: more than device memory gives (so not
/// `DeviceCopy`), but a shared array may hold it.
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
pub struct Page(pub [u32; 1024]);

// SAFETY: 1024 `u32`s with no padding: every bit pattern is valid.
unsafe impl bytemuck::Zeroable for Page {}
// SAFETY: as above.
unsafe impl bytemuck::AnyBitPattern for Page {}

/// 16 bytes aligned to 16: the largest alignment a kernel parameter passed
/// by value may have (`gpu_device::MAX_PARAMETER_ALIGN`).
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C, align(16))]
pub struct Quad(pub [u32; 4]);

/// What [`alignment_of_lines`] reports per thread.
pub mod fact {
    /// `input`'s address modulo 256.
    pub const INPUT: usize = 0;
    /// The address of `tagged[0].lines[0]` modulo 256.
    pub const FIELD: usize = 1;
    /// The by-value `quad`'s address modulo 16.
    pub const BY_VALUE: usize = 2;
    /// The static shared array's address modulo 256.
    pub const STATIC_SHARED: usize = 3;
    /// The dynamic shared array's address modulo 256 (`NONE` without a slot).
    pub const DYNAMIC_SHARED: usize = 4;
    /// The address of this thread's element of `copies` modulo 256 (`NONE`
    /// past its end).
    pub const OUTPUT: usize = 5;
    /// `quad.0[3]`.
    pub const QUAD_VALUE: usize = 6;
    /// `tagged[0].tag * 1000 + tagged[0].lines[0].0[63]`.
    pub const TAGGED_VALUE: usize = 7;
    /// The address of `shared_array!(Page; 1)` modulo 4096.
    pub const STATIC_SHARED_PAGE: usize = 8;
    /// How many facts.
    pub const COUNT: usize = 9;
    /// No such address.
    pub const NONE: u32 = 999;
}

/// Each thread writes the facts of [`fact`] at its index, and copies
/// `input[i]` into `copies[i]`.
#[kernel]
pub fn alignment_of_lines(
    input: &[Line],
    tagged: &[Tagged],
    quad: Quad,
    mut copies: DisjointSlice<Line>,
    mut out: DisjointSlice<[u32; fact::COUNT]>,
    smem: DynamicShared<Line>,
) {
    let i = thread_index();
    let misalignment = |p: usize, align: usize| (p % align) as u32;
    let tile = shared_array!(Line; 2);
    let page = shared_array!(Page; 1);
    let dynamic = if smem.is_empty() {
        fact::NONE
    } else {
        misalignment(smem.raw().as_mut_ptr() as usize, 256)
    };
    let output = match copies.get_mut(i) {
        Some(slot) => {
            let at = misalignment(slot as *mut Line as usize, 256);
            if let Some(v) = input.get(i.get()) {
                *slot = *v;
            }
            at
        }
        None => fact::NONE,
    };
    let (field, tagged_value) = match tagged.first() {
        Some(t) => (
            misalignment(core::ptr::addr_of!(t.lines[0]) as usize, 256),
            t.tag * 1000 + t.lines[0].0[63],
        ),
        None => (fact::NONE, fact::NONE),
    };
    out.set(
        i,
        [
            misalignment(input.as_ptr() as usize, 256),
            field,
            misalignment(core::ptr::addr_of!(quad) as usize, 16),
            misalignment(tile.raw().as_mut_ptr() as usize, 256),
            dynamic,
            output,
            quad.0[3],
            tagged_value,
            misalignment(page.raw().as_mut_ptr() as usize, 4096),
        ],
    );
}
