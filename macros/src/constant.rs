//! `constant!`: values in the GPU's constant memory, declared as statics:
//!
//! ```ignore
//! gpu_device::constant! {
//!     /// The filter's taps.
//!     pub static TAPS: [f32; 9];
//! }
//! ```
//!
//! Each becomes a `gpu_device::constant::Constant<T>`: on the device, over a
//! static named `__gpu_const_<crate>_<NAME>` that `gpu-builder` moves into
//! the `.const` space; on the host, naming that symbol and the crate's
//! `KERNEL_MODULE`, where the runtime finds the global to set (the crate
//! calls `embed_kernels!()`). The symbol is defined on the host too, so two
//! constants of one name in a crate clash on both targets.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Attribute, Ident, Token, Type, Visibility};

/// One `#[attrs] vis static NAME: T;`.
struct Declaration {
    attrs: Vec<Attribute>,
    vis: Visibility,
    name: Ident,
    ty: Type,
}

struct Declarations(Vec<Declaration>);

impl Parse for Declarations {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut all = Vec::new();
        while !input.is_empty() {
            let attrs = input.call(Attribute::parse_outer)?;
            let vis: Visibility = input.parse()?;
            input.parse::<Token![static]>().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected `static NAME: T;`, as in `pub static TAPS: [f32; 9];`",
                )
            })?;
            if input.peek(Token![mut]) {
                return Err(input.error(
                    "a constant is written by the host only: declare it `static`, not `static mut`",
                ));
            }
            let name: Ident = input.parse()?;
            input.parse::<Token![:]>()?;
            let ty: Type = input.parse()?;
            if input.peek(Token![=]) {
                return Err(input.error(
                    "a constant has no initialiser here: it starts zeroed, and the host sets it (`TAPS.set(value, &stream)`)",
                ));
            }
            input.parse::<Token![;]>()?;
            all.push(Declaration {
                attrs,
                vis,
                name,
                ty,
            });
        }
        Ok(Declarations(all))
    }
}

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let Declarations(declarations) = syn::parse2(input)?;
    let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "crate".into());
    let device = quote!(::gpu_device);
    let items = declarations.iter().map(|d| {
        let Declaration {
            attrs,
            vis,
            name,
            ty,
        } = d;
        let symbol = format!("__gpu_const_{krate}_{name}");
        quote! {
            #(#attrs)*
            #[cfg(target_arch = "nvptx64")]
            #vis static #name: #device::constant::Constant<#ty> = {
                #[unsafe(export_name = #symbol)]
                static STORAGE: #device::constant::ConstantStorage<#ty> =
                    #device::constant::ConstantStorage::zeroed();
                // SAFETY: `STORAGE` is the global `#symbol`, holding a `#ty`.
                unsafe { #device::constant::Constant::on_device(#symbol, &STORAGE) }
            };
            #(#attrs)*
            #[cfg(not(target_arch = "nvptx64"))]
            #vis static #name: #device::constant::Constant<#ty> = {
                // The symbol on the host too: a second constant of this name
                // in the crate is an error here, as it is on the device.
                #[unsafe(export_name = #symbol)]
                static SYMBOL: u8 = 0;
                // SAFETY: the crate's module, whose device code declares the
                // global `#symbol` holding a `#ty` (the item above).
                unsafe { #device::constant::Constant::on_host(#symbol, &crate::KERNEL_MODULE) }
            };
            const _: () = ::core::assert!(
                ::core::mem::size_of::<#ty>() <= 64 * 1024,
                "a GPU gives a module 64 KiB of constant memory"
            );
        }
    });
    Ok(quote!(#(#items)*))
}

#[cfg(test)]
mod tests {
    use super::expand;
    use quote::quote;

    #[test]
    fn each_static_gets_its_symbol_on_both_targets() {
        let out = expand(quote!(
            /// Taps.
            pub static TAPS: [f32; 9];
            static SCALE: f64;
        ))
        .unwrap()
        .to_string();
        // (The crate's name, in a unit test outside cargo's build: `crate`.)
        let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "crate".into());
        for name in ["TAPS", "SCALE"] {
            let symbol = format!("\"__gpu_const_{krate}_{name}\"");
            assert_eq!(out.matches(&symbol).count(), 4, "{out}");
        }
        assert!(out.contains("& crate :: KERNEL_MODULE"), "{out}");
    }

    #[test]
    fn what_a_constant_cannot_be_is_refused() {
        for (tokens, error) in [
            (
                quote!(
                    static mut X: u32;
                ),
                "not `static mut`",
            ),
            (
                quote!(
                    static X: u32 = 5;
                ),
                "it starts zeroed",
            ),
            (
                quote!(
                    const X: u32;
                ),
                "expected `static NAME: T;`",
            ),
        ] {
            let err = expand(tokens).unwrap_err().to_string();
            assert!(err.contains(error), "{err}");
        }
    }
}
