//! Collectives across devices and processes, through NCCL: all-reduce,
//! broadcast, reduce-scatter and all-gather of device buffers.
//!
//! Two shapes, as NCCL has:
//!
//! - **one process, every GPU**: [`Communicators`] holds one rank per device
//!   and takes every rank's buffers and streams in one call (queued as one
//!   NCCL group, as NCCL requires when one thread drives several GPUs);
//! - **one process per GPU** (and so across hosts): each process makes its
//!   rank, a [`Communicator`], from a [`UniqueId`] that one process creates
//!   and the others receive through a file or an environment variable.
//!
//! Every collective is queued on the crate's streams and tracked like a
//! kernel: it waits, on the device, for the work that writes its inputs or
//! uses its outputs on other streams, and later work waits for it in turn;
//! the host does not block. Buffers and streams must belong to the rank's
//! device; lengths are checked against the operation (an error names the
//! rank and both lengths). The simulator runs the same operations on host
//! memory with the same results.
//!
//! NCCL is loaded when the first communicator or id is made (see
//! [`NCCL_LIBRARY_ENV`](crate::NCCL_LIBRARY_ENV) for where it is looked
//! for); a missing library is [`Error::NcclUnavailable`]. Before that, this
//! process's `NCCL_NVLS_ENABLE` is set to `0`: this crate never lets NCCL use
//! NVLink multicast (NVLS).

mod call;
mod communicator;
mod group;
mod unique_id;

pub use communicator::Communicator;
pub use group::Communicators;
pub use unique_id::{UniqueId, UNIQUE_ID_ENV};

use crate::backend::{status, DriverError, ElementKind};
use crate::error::Error;
use gpu_device::DeviceCopy;

/// The variable NCCL reads to enable NVLink multicast; kept at `0`.
pub const NVLS_ENV: &str = "NCCL_NVLS_ENABLE";

/// Element types collectives move and reduce: `i8`, `u8`, `i32`, `u32`,
/// `i64`, `u64`, `f32`, `f64` (NCCL's data types, less the half-precision
/// ones, which Rust has no standard type for).
#[diagnostic::on_unimplemented(
    message = "NCCL does not move or reduce `{Self}` elements",
    label = "not one of NCCL's element types",
    note = "collectives take buffers of i8, u8, i32, u32, i64, u64, f32 or f64"
)]
pub trait CollectiveElement: DeviceCopy + sealed::Sealed {}

pub(crate) mod sealed {
    /// Implemented for the types NCCL reduces; the kind names the type to it.
    pub trait Sealed {
        /// NCCL's data type.
        const KIND: crate::backend::ElementKind;
    }
}

macro_rules! collective_element {
    ($($t:ty => $kind:ident),*) => {$(
        impl sealed::Sealed for $t {
            const KIND: ElementKind = ElementKind::$kind;
        }
        impl CollectiveElement for $t {}
    )*};
}
collective_element!(i8 => I8, u8 => U8, i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

/// Sets `NCCL_NVLS_ENABLE=0` in this process unless it is already, before
/// anything of NCCL runs (NCCL reads it when it initialises). A different
/// value is overridden, with a note on standard error.
fn keep_nvlink_multicast_off() {
    match std::env::var(NVLS_ENV) {
        Ok(v) if v.trim() == "0" => {}
        other => {
            if let Ok(v) = other {
                crate::diagnostics::report(
                    crate::diagnostics::Level::Warn,
                    &format!("{NVLS_ENV}={v} overridden with 0: this crate never enables NVLink multicast"),
                );
            }
            std::env::set_var(NVLS_ENV, "0");
        }
    }
}

/// A failed call of the collective layer as the runtime reports it.
fn error(e: DriverError) -> Error {
    match e.code {
        status::COLLECTIVE_LIBRARY_MISSING => Error::NcclUnavailable {
            reason: e.description,
        },
        status::COLLECTIVE_FAILED => Error::Nccl(e),
        _ => e.into(),
    }
}
