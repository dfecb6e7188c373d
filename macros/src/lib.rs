//! Procedural macros of the `gpu-*` crates; use them through `gpu_device`.
//!
//! Each macro parses its input into a small model (`kernel::model`), reports
//! every problem as a `syn::Error` spanned on the offending tokens, and only
//! then emits code.

#![deny(missing_docs)]

use proc_macro::TokenStream;

mod device_copy;
mod embed;
mod kernel;
mod shared;

/// Turns an ordinary function into a GPU kernel.
///
/// Compiled for `nvptx64-nvidia-cuda`, the function becomes a PTX entry point of
/// the same name. Compiled for the host, it becomes a module of the same name
/// whose `launch` function is the typed launcher that `gpu_runtime::launch!`
/// calls:
///
/// | kernel parameter       | launcher argument                                 |
/// |------------------------|---------------------------------------------------|
/// | `u8`…`u64`, `i8`…`i64`, `usize`, `isize`, `f32`, `f64`, `bool` | the same scalar |
/// | `&[T]`                 | `&DeviceBuffer<T>` or a `DeviceView<T>`           |
/// | `DisjointSlice<T>`     | `&mut DeviceBuffer<T>` or a `DeviceViewMut<T>`    |
/// | `&[DeviceAtomic<T>]`   | `&mut DeviceBuffer<T>` or a `DeviceViewMut<T>`    |
/// | a `#[derive(DeviceCopy)]` struct | the struct, by value                    |
///
/// A generic kernel lists the types to instantiate: `#[kernel(f32, f64)]`; the
/// entry points are named `<kernel>_<type>` and the launcher picks the one
/// matching its arguments.
///
/// `#[kernel(block = (x, y, z))]` (or `(x, y)`, or `x`; `usize` constant
/// expressions, checked when compiled) declares the only block shape the
/// kernel runs in: the launcher refuses every other, and the entry points
/// tell the compiler the shape, so `blockDim` is a constant in the body (see
/// `gpu_device::entry`). It follows a generic kernel's instances, and may
/// name its const parameter: `#[kernel(16, 32, block = (TILE, TILE))]`.
///
/// Each `&[T]` input's loads go through the read-only cache (`ld.global.nc`):
/// nothing writes an input during a launch (see
/// `gpu_builder::kernel_inputs`).
#[proc_macro_attribute]
pub fn kernel(args: TokenStream, item: TokenStream) -> TokenStream {
    kernel::expand(args.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `gpu_device::DeviceCopy` for a `#[repr(C)]` struct whose fields
/// are all `DeviceCopy`.
#[proc_macro_derive(DeviceCopy)]
pub fn derive_device_copy(item: TokenStream) -> TokenStream {
    device_copy::expand(item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Embeds the crate's kernels, built to PTX by `gpu_builder` in the crate's
/// `build.rs`, as `pub static KERNEL_MODULE` at the crate root. Every crate with
/// `#[kernel]` functions calls it once, in `lib.rs`.
#[proc_macro]
pub fn embed_kernels(input: TokenStream) -> TokenStream {
    embed::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// A static shared-memory array for each block: `shared_array!(f32; 256)`
/// evaluates to a `gpu_device::shared::SharedArray<f32>` of 256 elements.
#[proc_macro]
pub fn shared_array(input: TokenStream) -> TokenStream {
    shared::expand(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
