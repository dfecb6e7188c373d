//! Device memory: owned buffers ([`DeviceBuffer`]), borrowed views, the
//! traits by which kernel launchers accept them, and copies.
//!
//! # Ordering across streams
//!
//! Every buffer tracks which streams used it, and each use on a new stream
//! waits, on the device, for the conflicting uses on other streams: a read for
//! the last write, a write for the last write and every read since. Work that
//! stays on one stream pays nothing; a hand-off between streams costs one
//! untimed event. So a kernel on `s1` writing a buffer, then a copy of it to
//! the host on `s2`, returns what the kernel wrote, with no event written by
//! hand. The details, and what raw pointers leave outside the model, are in
//! the tracking module's documentation.
//!
//! # Allocation
//!
//! Buffers are allocated from the device's memory pool in stream order, and
//! freed back to it in stream order when dropped, on the stream that used
//! them last (after the uses on other streams): dropping a buffer never waits
//! for the device. A drop inside a stream callback, where CUDA calls are not
//! allowed, is carried out by a release thread.

mod buffer;
mod copy;
mod direct;
mod element;
mod encoded_maps;
mod foreign;
mod lender;
mod managed;
mod pitched;
mod region;
mod shaped_view;
mod tensor_map;
mod tensor_map_out;
pub(crate) mod tracking;
mod view;

pub(crate) use buffer::byte_len;
pub use buffer::DeviceBuffer;
pub(crate) use copy::check_device;
pub use lender::Lender;
pub use managed::ManagedBuffer;
pub use pitched::PitchedBuffer;
pub use region::{Region2d, Region2dMut};
pub(crate) use shaped_view::u32_extents;
pub use shaped_view::{DeviceView2dMut, DeviceView3dMut};
pub use tensor_map::{Swizzle, TensorElement, TensorMap, TensorMapLayout, MAX_BOX, MAX_RANK};
pub use tensor_map_out::{TensorMapOut, MAX_OUT_EXTENT};
pub(crate) use view::sealed;
pub use view::{
    AfterAccess, DeviceInput, DeviceOutput, DeviceView, DeviceViewMut, GraphMemory, RawView,
};
