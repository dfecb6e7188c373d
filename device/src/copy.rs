//! The [`DeviceCopy`] trait: values that may be copied between host and device.

/// A type whose values may be copied byte for byte between host and device
/// memory and passed to kernels by value.
///
/// Derive it on structs with `#[derive(Clone, Copy, DeviceCopy)]` and
/// `#[repr(C)]`; the derive rejects structs without a stable layout and checks
/// every field.
///
/// # Safety
/// Implementors are `Copy`, hold no references, pointers or host resources, have
/// a layout the host and the device agree on (a primitive, an array of
/// `DeviceCopy`, or `#[repr(C)]`/`#[repr(transparent)]` of `DeviceCopy` fields),
/// and all-zero bytes are a valid value (device buffers start zeroed).
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
    /// `unsafe(...)`.
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
