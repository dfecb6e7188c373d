//! `shared_array!(T; N)`: a per-block static shared array under a unique PTX name.

use proc_macro2::TokenStream;
use quote::quote;
use std::sync::atomic::{AtomicUsize, Ordering};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Token, Type};

struct SharedArrayInput {
    element: Type,
    len: Expr,
}

impl Parse for SharedArrayInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let element = input.parse()?;
        input.parse::<Token![;]>().map_err(|e| {
            syn::Error::new(e.span(), "expected `;`: write `shared_array!(f32; 256)`")
        })?;
        let len = input.parse()?;
        Ok(SharedArrayInput { element, len })
    }
}

/// Distinguishes the arrays of one crate; the crate name distinguishes crates.
static NEXT_ARRAY: AtomicUsize = AtomicUsize::new(0);

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let SharedArrayInput { element, len } = syn::parse2(input)?;
    let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "crate".into());
    let symbol = format!(
        "__gpu_shared_{krate}_{}",
        NEXT_ARRAY.fetch_add(1, Ordering::Relaxed)
    );
    Ok(quote! { ::gpu_device::__shared_array_named!(#element; #len; #symbol) })
}
