// Device memory is allocated aligned to 256 bytes (CUDA's allocations and
// the simulator's): a `DeviceCopy` type aligned to more would be misaligned
// in a kernel's `&[T]` (4096-aligned elements came at 512 mod 4096). The
// derive refuses the attribute, and a struct whose alignment comes from a
// field is refused where it is defined.
use gpu_device::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C, align(4096))]
pub struct Page {
    x: u8,
}

/// Over-aligned and `DeviceCopy` by a hand-written (broken) promise.
#[derive(Clone, Copy)]
#[repr(C, align(512))]
pub struct Raw(u8);
// SAFETY: none: the alignment breaks the contract, which the derives below
// and the runtime catch.
unsafe impl DeviceCopy for Raw {}

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Holder {
    tag: u32,
    raw: Raw,
}

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct ArrayHolder {
    raws: [Raw; 2],
}

fn main() {}
