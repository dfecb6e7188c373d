//! The element types shared memory may hold.

use crate::atomic::{AtomicElement, DeviceAtomic};

/// A type that may live in shared memory and be handed between the threads
/// of a block.
///
/// # Safety
/// Implementors are `Send` and `Sync` (a value written by one thread is read,
/// or referenced, by others) and valid for every bit pattern: shared memory
/// starts uninitialised, so a slot no thread has written holds arbitrary bits.
///
/// Implemented for every [`bytemuck::AnyBitPattern`] type that is `Send` and
/// `Sync` (integers, floats, arrays of them, your own `#[derive(AnyBitPattern)]`
/// structs) and for [`DeviceAtomic<T>`]. Not for `bool` (two of its 256 bit
/// patterns are valid), and not for [`ThreadIndex`](crate::ThreadIndex) or the
/// phase token (they are not `Send`: a witness must not reach another thread).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be stored in shared memory",
    label = "not `SharedElement`",
    note = "shared memory holds `Send + Sync` types valid for every bit pattern (`bytemuck::AnyBitPattern`: integers, floats, arrays of them) and `DeviceAtomic<T>`; not `bool`, not witnesses or phase tokens"
)]
pub unsafe trait SharedElement: Send + Sync {
    /// Whether the type is an atomic cell: a shared reference to one is no
    /// read (its accesses are atomic operations), which the simulator's race
    /// detector must know.
    #[doc(hidden)]
    const ATOMIC_CELL: bool = false;
}

// SAFETY: `AnyBitPattern` types are valid for every bit pattern, and the
// bounds require `Send + Sync`.
unsafe impl<T: bytemuck::AnyBitPattern + Send + Sync> SharedElement for T {}

// SAFETY: `DeviceAtomic<T>` is `repr(transparent)` over an integer or float
// (valid for every bit pattern), and is `Send + Sync` for those `T`.
unsafe impl<T: AtomicElement + Send> SharedElement for DeviceAtomic<T> {
    const ATOMIC_CELL: bool = true;
}
