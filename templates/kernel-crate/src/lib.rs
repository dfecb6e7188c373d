//! The kernels of this crate: compiled for the GPU by `build.rs`, and to
//! typed launchers for the host.
#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]

use gpu_device::prelude::*;

gpu_device::embed_kernels!();

/// `out[i] = a * x[i] + y[i]`.
#[kernel]
pub fn saxpy(a: f32, x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
    let i = thread_index();
    if i.get() < x.len().min(y.len()) {
        out.set(i, a * x[i.get()] + y[i.get()]);
    }
}
