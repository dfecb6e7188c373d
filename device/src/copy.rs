//! The [`DeviceCopy`] trait: values that may be copied between host and device.

/// A type whose values may be copied byte for byte between host and device
/// memory and passed to kernels by value.
///
/// Derive it on structs with `#[derive(Clone, Copy, DeviceCopy)]` and
/// `#[repr(C)]`; the derive rejects structs without a stable layout and checks
/// every field.
///
/// # Alignment
/// A `DeviceCopy` type is aligned to at most [`MAX_DEVICE_ALIGN`] (256)
/// bytes: every device allocation is aligned to 256 bytes (CUDA's
/// `cuMemAlloc`, `cuMemAllocAsync` and pools, and the simulator's), and a
/// kernel's `&[T]` must be aligned for `T`. The derive refuses
/// `#[repr(align(N))]` with a larger `N`, and the runtime checks every
/// element and by-value parameter type when a launcher or an allocation is
/// compiled (a compile error naming the type), so an over-aligned type that
/// is `DeviceCopy` by a hand-written `unsafe impl` is refused as well.
///
/// A kernel parameter passed by value is aligned to at most
/// [`MAX_PARAMETER_ALIGN`] (16) bytes, rustc's PTX kernel ABI's limit:
/// `#[kernel]` refuses a more aligned one (pass it in a slice).
///
/// # Safety
/// Implementors are `Copy`, hold no references, pointers or host resources, have
/// a layout the host and the device agree on (a primitive, an array of
/// `DeviceCopy`, or `#[repr(C)]`/`#[repr(transparent)]` of `DeviceCopy` fields),
/// are aligned to at most [`MAX_DEVICE_ALIGN`] bytes, and all-zero bytes are a
/// valid value (device buffers start zeroed).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be copied to or from a GPU kernel",
    label = "not `DeviceCopy`",
    note = "kernels take scalars, `&[T]`, `DisjointSlice<T>`, `&[DeviceAtomic<T>]` and `#[repr(C)]` structs that `#[derive(Clone, Copy, DeviceCopy)]`"
)]
pub unsafe trait DeviceCopy: Copy + 'static {
    /// Written by `#[derive(DeviceCopy)]` in its impls: a derive told a
    /// path that does not lead to this crate (`#[device_copy(unsafe(crate =
    /// "..."))]`, a broken promise) is an error where it finds a trait
    /// without this item. A second line of defence only: the guard is the
    /// `unsafe(...)`. A unit value: naming or overriding it proves nothing
    /// and breaks nothing.
    #[doc(hidden)]
    const __GPU_DEVICE_COPY: () = ();

    /// The type's layout fingerprint, which the runtime compares between
    /// host and device before a launch (see `__private::interface`): for a
    /// primitive, its name, size and alignment; `#[derive(DeviceCopy)]`
    /// adds each field's offset and fingerprint, so that a field a `#[cfg]`
    /// changes on one target changes it.
    #[doc(hidden)]
    const __GPU_LAYOUT: u64 = crate::interface::primitive_layout::<Self>();
}

/// The largest alignment of a [`DeviceCopy`] type, in bytes: that of every
/// device allocation (CUDA's allocations and pools, and the simulator's).
pub const MAX_DEVICE_ALIGN: usize = 256;

/// Fails to compile, once instantiated, unless `T` is aligned to at most
/// [`MAX_DEVICE_ALIGN`] bytes: the runtime calls it wherever memory for `T`
/// is allocated or handed to a kernel. (A compile-time check only: safe.)
#[doc(hidden)]
#[inline(always)]
pub const fn require_device_align<T: DeviceCopy>() {
    const {
        assert!(
            core::mem::align_of::<T>() <= MAX_DEVICE_ALIGN,
            "a DeviceCopy type is aligned to at most 256 bytes (gpu_device::MAX_DEVICE_ALIGN), the alignment of device allocations: a kernel would see its elements misaligned"
        )
    }
}

/// The largest alignment of a value a kernel takes by value, in bytes:
/// rustc's PTX kernel ABI passes parameters aligned to at most 16. Larger
/// aligned types travel in slices (`&[T]`), aligned to
/// [`MAX_DEVICE_ALIGN`].
pub const MAX_PARAMETER_ALIGN: usize = 16;

/// Fails to compile unless `T` is aligned to at most
/// [`MAX_PARAMETER_ALIGN`] bytes: `#[kernel]` evaluates it for every
/// parameter passed by value (on the device in a `const` item, before
/// rustc's ABI computation would crash on such a type; on the host when the
/// launcher is instantiated). A compile-time check only: safe.
#[doc(hidden)]
#[inline(always)]
pub const fn require_parameter_align<T>() {
    assert!(
        core::mem::align_of::<T>() <= MAX_PARAMETER_ALIGN,
        "a kernel parameter passed by value is aligned to at most 16 bytes (gpu_device::MAX_PARAMETER_ALIGN, rustc's PTX kernel ABI): pass a more aligned value in a slice (`&[T]`)"
    )
}

macro_rules! device_copy {
    ($($t:ty),*) => {
        // SAFETY: primitives: `Copy`, no pointers, fixed layout, zero is valid.
        $(unsafe impl DeviceCopy for $t {})*
    };
}
device_copy!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64, bool);

// SAFETY: an array of `DeviceCopy` elements is laid out element after element,
// with no padding between them beyond what the element type already has.
unsafe impl<T: DeviceCopy, const N: usize> DeviceCopy for [T; N] {
    const __GPU_LAYOUT: u64 = crate::interface::array_layout(T::__GPU_LAYOUT, N);
}
