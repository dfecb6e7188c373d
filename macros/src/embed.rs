//! `embed_kernels!()`: the crate's PTX as a static the launchers load from.

use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    if !input.is_empty() {
        return Err(syn::Error::new_spanned(
            input,
            "embed_kernels!() takes no arguments: the PTX comes from this crate's build.rs",
        ));
    }
    Ok(quote! {
        /// The PTX module holding this crate's kernels, built by `build.rs`.
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the PTX is the file this crate's build script wrote with
        // `gpu_builder` from this crate's own `#[kernel]` functions, whose
        // launchers are the ones that load it.
        pub static KERNEL_MODULE: ::gpu_runtime::EmbeddedModule = unsafe {
            ::gpu_runtime::EmbeddedModule::new(
                ::core::env!("CARGO_PKG_NAME"),
                ::core::include_str!(::core::concat!(::core::env!("OUT_DIR"), "/kernels.ptx")),
            )
        };
    })
}
