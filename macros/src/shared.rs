//! `shared_array!`: a per-block static shared array under a unique symbol.
//!
//! - `shared_array!(T; N)`: a `gpu_device::shared::Shared<T, N>`;
//! - `shared_array!(T; ROWS, COLS)`: a `Shared2d<T, ROWS, COLS, COLS>`;
//! - `shared_array!(T; ROWS, COLS, padding = P)`: rows `COLS + P` slots apart.
//!
//! On the device the storage is a `static` named `__gpu_shared_<crate>_<n>`,
//! which `gpu-builder` moves into PTX's shared state space; on the host (the
//! simulator) the block's instance of the array, found by the same name.

use proc_macro2::TokenStream;
use quote::quote;
use std::sync::atomic::{AtomicUsize, Ordering};
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, Token, Type};

/// The parsed arguments.
struct SharedArrayInput {
    element: Type,
    shape: Shape,
}

enum Shape {
    Linear(Expr),
    Matrix {
        rows: Box<Expr>,
        cols: Box<Expr>,
        padding: Option<Box<Expr>>,
    },
}

const USAGE: &str = "write `shared_array!(f32; 256)`, `shared_array!(f32; 16, 16)` or `shared_array!(f32; 32, 32, padding = 1)`";

impl Parse for SharedArrayInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let element = input.parse()?;
        input
            .parse::<Token![;]>()
            .map_err(|e| syn::Error::new(e.span(), format!("expected `;`: {USAGE}")))?;
        let first: Expr = input.parse()?;
        if input.is_empty() {
            return Ok(SharedArrayInput {
                element,
                shape: Shape::Linear(first),
            });
        }
        input.parse::<Token![,]>()?;
        let cols: Expr = input.parse()?;
        let mut padding = None;
        if input.parse::<Option<Token![,]>>()?.is_some() && !input.is_empty() {
            let name: Ident = input.parse()?;
            if name != "padding" {
                return Err(syn::Error::new(
                    name.span(),
                    format!("unknown option `{name}`: the only option is `padding = P`; {USAGE}"),
                ));
            }
            input.parse::<Token![=]>()?;
            padding = Some(Box::new(input.parse()?));
            input.parse::<Option<Token![,]>>()?;
        }
        if !input.is_empty() {
            return Err(input.error(format!("unexpected tokens: {USAGE}")));
        }
        Ok(SharedArrayInput {
            element,
            shape: Shape::Matrix {
                rows: Box::new(first),
                cols: Box::new(cols),
                padding,
            },
        })
    }
}

/// Distinguishes the arrays of one crate; the crate name distinguishes crates.
static NEXT_ARRAY: AtomicUsize = AtomicUsize::new(0);

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let SharedArrayInput { element, shape } = syn::parse2(input)?;
    let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "crate".into());
    let symbol = format!(
        "__gpu_shared_{krate}_{}",
        NEXT_ARRAY.fetch_add(1, Ordering::Relaxed)
    );
    let (len, handle) = match shape {
        Shape::Linear(n) => (
            quote!(#n),
            quote!(::gpu_device::shared::Shared::<#element, { #n }>),
        ),
        Shape::Matrix {
            rows,
            cols,
            padding,
        } => {
            let stride = match padding {
                Some(p) => quote!((#cols) + (#p)),
                None => quote!(#cols),
            };
            (
                quote!((#rows) * (#stride)),
                quote!(::gpu_device::shared::Shared2d::<#element, { #rows }, { #cols }, { #stride }>),
            )
        }
    };
    Ok(quote! {{
        ::gpu_device::__private::require_shared_element::<#element>();
        #[cfg(target_arch = "nvptx64")]
        let __gpu_shared: *mut #element = {
            #[unsafe(export_name = #symbol)]
            static STORAGE: ::gpu_device::__private::SharedStorage<#element, { #len }> =
                ::gpu_device::__private::SharedStorage::uninit();
            STORAGE.as_ptr()
        };
        #[cfg(not(target_arch = "nvptx64"))]
        let __gpu_shared: *mut #element =
            ::gpu_device::__private::static_shared::<#element>(#symbol, #len);
        #[allow(unused_unsafe)]
        // SAFETY: `__gpu_shared` addresses this invocation's own array of
        // `len` slots of the element type, aligned for it, in the block's
        // shared memory.
        unsafe { #handle::from_raw(__gpu_shared) }
    }})
}
