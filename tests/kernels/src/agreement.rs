//! Kernels whose host and device builds disagree on purpose, each as a
//! hostile reviewer would make them with `cfg`: the launcher passes what the
//! host compiled, the entry point reads what the device compiled. Every one
//! must be refused at its launch, on the GPU and on the simulator, with an
//! error naming both sides (`tests/suite/launch/host_device_agreement.rs`), never run.

use gpu_device::prelude::*;

/// 64 on the host, 32 on the device: a `cfg!` in a constant.
pub const WIDTH: usize = if cfg!(target_arch = "nvptx64") {
    32
} else {
    64
};

/// Declares blocks of [`WIDTH`] threads: the launcher would check blocks of
/// 64 while the PTX folds `blockDim.x` to 32, and neighbouring blocks would
/// share thread indices.
#[kernel(block = (WIDTH, 1))]
pub fn block_by_cfg(mut out: DisjointSlice<u32>) {
    let i = thread_index();
    out.set(i, block_dim().x);
}

/// 4 bytes on the host, 8 on the device: a field under `cfg`.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Grown {
    /// On both.
    pub a: u32,
    /// On the device only.
    #[cfg(target_arch = "nvptx64")]
    pub b: u32,
}

/// Writes [`Grown`] elements: on a GPU each thread would write 8 bytes of a
/// buffer the host sized at 4 per element, past its end.
#[kernel]
pub fn element_grown_by_cfg(mut out: DisjointSlice<Grown>) {
    let i = thread_index();
    if let Some(slot) = out.get_mut(i) {
        slot.a = 1;
    }
}

/// The same size on both targets, another type: a `bool` on the device,
/// where the host writes any byte.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Flag {
    /// A flag on the device, a byte on the host.
    #[cfg(target_arch = "nvptx64")]
    pub set: bool,
    /// A flag on the device, a byte on the host.
    #[cfg(not(target_arch = "nvptx64"))]
    pub set: u8,
}

/// Reads [`Flag`] elements: a host byte of 2 would be an invalid `bool` on
/// the device. Only the layout fingerprint tells the two apart.
#[kernel]
pub fn field_type_by_cfg(flags: &[Flag], mut out: DisjointSlice<u32>) {
    let i = thread_index();
    if let Some(flag) = flags.get(i.get()) {
        out.set(i, flag.set as u32);
    }
}

/// `f32` on the host, `u32` on the device: a type alias under `cfg`.
#[cfg(not(target_arch = "nvptx64"))]
pub type Real = f32;
/// `f32` on the host, `u32` on the device: a type alias under `cfg`.
#[cfg(target_arch = "nvptx64")]
pub type Real = u32;

/// Reads [`Real`]s: the host passes `f32` bits the device reads as `u32`.
#[kernel]
pub fn alias_by_cfg(x: &[Real], scale: Real, mut out: DisjointSlice<Real>) {
    let i = thread_index();
    if let Some(&v) = x.get(i.get()) {
        out.set(i, v * scale);
    }
}

/// A generic kernel instantiated for [`Real`].
#[kernel(Real)]
pub fn instance_by_cfg<T: DeviceCopy>(x: &[T], mut out: DisjointSlice<T>) {
    let i = thread_index();
    if let Some(&v) = x.get(i.get()) {
        out.set(i, v);
    }
}

/// Blocks of 32 on the device, 64 on the host: the attribute itself under
/// `cfg_attr`.
#[cfg_attr(target_arch = "nvptx64", kernel(block = 32))]
#[cfg_attr(not(target_arch = "nvptx64"), kernel(block = 64))]
pub fn attribute_by_cfg_attr(mut out: DisjointSlice<u32>) {
    let i = thread_index();
    out.set(i, block_dim().x);
}

/// The device assumes `len(input >= out)`, which the host's launcher, built
/// without the option, never checks: the device would read past `input`.
#[cfg_attr(target_arch = "nvptx64", kernel(len(input >= out)))]
#[cfg_attr(not(target_arch = "nvptx64"), kernel)]
pub fn length_bound_by_cfg_attr(input: &[u32], mut out: DisjointSlice<u32>) {
    let i = thread_index();
    if let Some(&v) = input.get(i.get()) {
        out.set(i, v);
    }
}
