//! `shared_array!`: a per-block static shared array under a unique symbol.
//!
//! - `shared_array!(T; N)`: a `gpu_device::shared::Shared<T, N>`;
//! - `shared_array!(T; ROWS, COLS)`: a `Shared2d<T, ROWS, COLS, COLS>`;
//! - `shared_array!(T; ROWS, COLS, padding = P)`: rows `COLS + P` slots apart;
//! - `..., map = M`: the array's ownership map in its write phase
//!   (`gpu_device::ownership`: `ByWarp<0>`, `ByBlock`, `Blocked<4>`,
//!   `Halo<2>`, `Tiles<R, C>`), not a generic parameter (a compile error);
//! - `..., written_in = Reading`: the array is written in the Reading phase
//!   and read in the Writing phase (the second buffer of a double buffer).
//! - `..., buffers = 2`: a `DoubleBuffer` (`T; N`) or a `DoubleBuffer2d`
//!   (matrices), two such arrays in one, one written in each phase (with an
//!   `Alternating` token).
//!
//! - `..., unsafe(device_crate = "path")`: `gpu_device` under another path
//!   (`unsafe`: see [`crate::path_option`]).
//!
//! On the device the storage is a `static` named `__gpu_shared_<crate>_<n>`,
//! which `gpu-builder` moves into PTX's shared state space; on the host (the
//! simulator) the block's instance of the array, found by the same name. The
//! element type and length are those of the invocation, never a generic
//! parameter (a compile error on both targets), so a symbol names one array.

use crate::errors::Errors;
use crate::path_option::{Key, PathOptions};
use proc_macro2::TokenStream;
use quote::quote;
use std::sync::atomic::{AtomicUsize, Ordering};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, Ident, Token, Type};

/// The parsed arguments.
struct SharedArrayInput {
    element: Type,
    shape: Shape,
    /// `map = M`.
    map: Option<Type>,
    /// `written_in = Reading`.
    written_in_reading: bool,
    /// `buffers = 2`.
    double: bool,
    /// `gpu_device`: `::gpu_device` unless `unsafe(device_crate = "...")`.
    device: syn::Path,
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

const OPTIONS: &str = "`padding = P` (matrix rows `COLS + P` slots apart), `map = M` (the ownership map, from `gpu_device::ownership`), `written_in = Reading` (written in the Reading phase, read in the Writing phase), `buffers = 2` (a double buffer: two arrays, one written in each phase) or `unsafe(device_crate = \"path\")` (the path to the `gpu_device` crate)";

const KEYS: &[Key] = &[Key::naming_crate(
    "device_crate",
    "my_gpu::device",
    "gpu_device",
)];

/// Parses `T; N` or `T; ROWS, COLS`, then the options; what is wrong with
/// an option goes to `errors`, and parsing goes on.
fn parse_input(input: ParseStream, errors: &mut Errors) -> syn::Result<SharedArrayInput> {
    let element = input.parse()?;
    input
        .parse::<Token![;]>()
        .map_err(|e| syn::Error::new(e.span(), format!("expected `;`: {USAGE}")))?;
    let first: Expr = input.parse()?;
    let mut cols: Option<Expr> = None;
    let mut padding: Option<(Ident, Expr)> = None;
    let mut map: Option<Type> = None;
    let mut written_in_reading = false;
    let mut double: Option<Ident> = None;
    let mut options = PathOptions::new(KEYS, OPTIONS);
    while !input.is_empty() {
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            break;
        }
        if PathOptions::starts_option(input) {
            let name = input.fork().call(Ident::parse_any)?;
            if name == "map" {
                let key = input.call(Ident::parse_any)?;
                input.parse::<Token![=]>()?;
                let value: Type = input.parse()?;
                if map.replace(value).is_some() {
                    errors.push(syn::Error::new(
                        key.span(),
                        "`map` is given twice: keep one",
                    ));
                }
            } else if name == "written_in" {
                input.call(Ident::parse_any)?;
                input.parse::<Token![=]>()?;
                let phase: Ident = input.parse()?;
                if phase == "Reading" {
                    written_in_reading = true;
                } else if phase != "Writing" {
                    errors.push(syn::Error::new(
                        phase.span(),
                        "`written_in` names a phase: `written_in = Reading` (or `Writing`, the default)",
                    ));
                }
            } else if name == "buffers" {
                let key = input.call(Ident::parse_any)?;
                input.parse::<Token![=]>()?;
                let count: syn::LitInt = input.parse()?;
                if count.base10_digits() != "2" {
                    errors.push(syn::Error::new(
                        count.span(),
                        "`buffers` is 2 (a double buffer) or left out",
                    ));
                }
                if double.replace(key.clone()).is_some() {
                    errors.push(syn::Error::new(
                        key.span(),
                        "`buffers` is given twice: keep one",
                    ));
                }
            } else if name == "padding" {
                let key = input.call(Ident::parse_any)?;
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                if padding.is_some() {
                    errors.push(syn::Error::new(
                        key.span(),
                        "`padding` is given twice: keep one",
                    ));
                } else {
                    padding = Some((key, value));
                }
            } else {
                options.parse_one(input, errors)?;
            }
        } else if cols.is_none() && padding.is_none() {
            cols = Some(input.parse()?);
        } else {
            return Err(input.error(format!("unexpected tokens: {USAGE}")));
        }
    }
    if let Some(key) = &double {
        if cols.is_none() && map.is_some() {
            errors.push(syn::Error::new(
                key.span(),
                "a one-dimensional double buffer (`buffers = 2`) uses the default map (slots `t + k * B`): leave `map` out",
            ));
        }
        if written_in_reading {
            errors.push(syn::Error::new(
                key.span(),
                "a double buffer (`buffers = 2`) is written in both phases, one matrix in each: leave `written_in` out",
            ));
        }
    }
    let shape = match (cols, padding) {
        (None, padding) => {
            if let Some((key, _)) = padding {
                errors.push(syn::Error::new(
                    key.span(),
                    "`padding` applies to matrices: `shared_array!(f32; 32, 32, padding = 1)`",
                ));
            }
            Shape::Linear(first)
        }
        (Some(cols), padding) => Shape::Matrix {
            rows: Box::new(first),
            cols: Box::new(cols),
            padding: padding.map(|(_, p)| Box::new(p)),
        },
    };
    Ok(SharedArrayInput {
        element,
        shape,
        map,
        written_in_reading,
        double: double.is_some(),
        device: options
            .get("device_crate")
            .cloned()
            .unwrap_or_else(|| syn::parse_quote!(::gpu_device)),
    })
}

/// Distinguishes the arrays of one crate; the crate name distinguishes crates.
static NEXT_ARRAY: AtomicUsize = AtomicUsize::new(0);

/// A new static shared array's symbol, `__gpu_shared_<crate>_<n>` (which
/// `gpu-builder` moves into PTX's shared state space): one per invocation of
/// `shared_array!` or `mbarriers!`.
pub fn next_symbol() -> String {
    let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "crate".into());
    format!(
        "__gpu_shared_{krate}_{}",
        NEXT_ARRAY.fetch_add(1, Ordering::Relaxed)
    )
}

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let mut errors = Errors::default();
    let parsed = (|input: ParseStream| parse_input(input, &mut errors)).parse2(input);
    let parsed = errors.ok(parsed);
    errors.finish()?;
    let SharedArrayInput {
        element,
        shape,
        map,
        written_in_reading,
        double,
        device,
    } = parsed.expect("no error, so parsed");
    // The map and the write phase, as trailing arguments of the handle's
    // type; a map is checked in a `const` item, where a generic parameter
    // of the enclosing function cannot appear (one array, one map).
    let phase = if written_in_reading {
        quote!(#device::shared::Reading)
    } else {
        quote!(#device::shared::Writing)
    };
    let (extra, map_check) = match (&map, written_in_reading || double) {
        (None, false) => (quote!(), quote!()),
        (map, _) => {
            let map = map
                .as_ref()
                .map(|m| quote!(#m))
                .unwrap_or_else(|| quote!(#device::ownership::BlockStride));
            (
                quote!(, #map, #phase),
                quote!(const _: () = #device::__private::require_shared_map::<#map>();),
            )
        }
    };
    let symbol = next_symbol();
    let (len, handle) = match shape {
        Shape::Linear(n) if double => (
            quote!(2 * (#n)),
            quote!(#device::shared::DoubleBuffer::<#element, { #n }>),
        ),
        Shape::Linear(n) => (
            quote!(#n),
            quote!(#device::shared::Shared::<#element, { #n } #extra>),
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
            if double {
                let map = map
                    .as_ref()
                    .map(|m| quote!(#m))
                    .unwrap_or_else(|| quote!(#device::ownership::BlockStride));
                (
                    quote!(2 * (#rows) * (#stride)),
                    quote!(#device::shared::DoubleBuffer2d::<#element, { #rows }, { #cols }, { #stride }, #map>),
                )
            } else {
                (
                    quote!((#rows) * (#stride)),
                    quote!(#device::shared::Shared2d::<#element, { #rows }, { #cols }, { #stride } #extra>),
                )
            }
        }
    };
    Ok(quote! {{
        #device::__private::require_shared_element::<#element>();
        #map_check
        // One invocation is one array of one element type and length, under
        // one symbol. On the device the `static` below cannot use a generic
        // parameter of the enclosing function; this item makes the host
        // refuse one just the same, where a generic element type would give
        // one symbol to arrays of several types (`DeviceAtomic<u32>` updated
        // in one, the same bytes read as `u32` in the other: a data race).
        #[cfg(not(target_arch = "nvptx64"))]
        const _: usize = ::core::mem::size_of::<[#element; #len]>();
        #[cfg(target_arch = "nvptx64")]
        let __gpu_shared: *mut #element = {
            #[unsafe(export_name = #symbol)]
            static STORAGE: #device::__private::SharedStorage<#element, { #len }> =
                #device::__private::SharedStorage::uninit();
            STORAGE.as_ptr()
        };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: this invocation's own symbol, element type and length.
        let __gpu_shared: *mut #element =
            unsafe { #device::__private::static_shared::<#element>(#symbol, #len) };
        #[allow(unused_unsafe)]
        // SAFETY: `__gpu_shared` addresses this invocation's own array of
        // `len` slots of the element type, aligned for it, in the block's
        // shared memory.
        unsafe { #handle::from_raw(__gpu_shared) }
    }})
}

#[cfg(test)]
mod tests {
    use super::expand;
    use quote::quote;

    #[test]
    fn the_device_crate_can_be_overridden() {
        for input in [
            quote!(f32; 256, unsafe(device_crate = "dev")),
            quote!(f32; 16, 16, padding = 1, unsafe(device_crate = "dev"),),
            quote!(f32; 16, 16, unsafe(device_crate = "dev"), padding = 1),
        ] {
            let out = expand(input.clone()).expect("expands").to_string();
            assert!(out.contains("dev :: __private :: static_shared"), "{out}");
            assert!(!out.contains("gpu_device"), "{input}: {out}");
        }
        let default = expand(quote!(f32; 16, 16, padding = 1))
            .unwrap()
            .to_string();
        assert!(
            default.contains(
                ":: gpu_device :: shared :: Shared2d :: < f32 , { 16 } , { 16 } , { (16) + (1) } >"
            ),
            "{default}"
        );
    }

    #[test]
    fn every_bad_option_is_reported() {
        let all: Vec<String> =
            expand(quote!(f32; 256, padding = 1, colour = "red", unsafe(device_crate = dev)))
                .expect_err("rejected")
                .into_iter()
                .map(|e| e.to_string())
                .collect();
        assert_eq!(all.len(), 3, "{all:?}");
        assert!(
            all[0].contains("unknown option `colour`: expected `padding = P`"),
            "{all:?}"
        );
        assert!(all[1].contains("string literal"), "{all:?}");
        assert!(all[2].contains("`padding` applies to matrices"), "{all:?}");
        let twice = expand(quote!(f32; 4, 4, padding = 1, padding = 2)).expect_err("rejected");
        assert!(
            twice.to_string().contains("`padding` is given twice"),
            "{twice}"
        );
        let promise = expand(quote!(f32; 4, device_crate = "dev")).expect_err("rejected");
        assert!(
            promise
                .to_string()
                .starts_with("write `unsafe(device_crate = \"dev\")`"),
            "{promise}"
        );
        let extra = expand(quote!(f32; 4, 4, 4)).expect_err("rejected");
        assert!(extra.to_string().contains("unexpected tokens"), "{extra}");
    }

    #[test]
    fn a_double_buffer_is_one_array_of_two_arrays() {
        let out = expand(quote!(f32; 16, 64, map = A, buffers = 2))
            .expect("expands")
            .to_string();
        assert!(
            out.contains(
                ":: gpu_device :: shared :: DoubleBuffer2d :: < f32 , { 16 } , { 64 } , { 64 } , A >"
            ),
            "{out}"
        );
        assert!(out.contains("2 * (16) * (64)"), "{out}");
        let errors = |input| -> Vec<String> {
            expand(input)
                .expect_err("rejected")
                .into_iter()
                .map(|e| e.to_string())
                .collect()
        };
        let three = errors(quote!(f32; 16, 64, buffers = 3));
        assert!(three[0].contains("`buffers` is 2"), "{three:?}");
        let linear = expand(quote!(f32; 256, buffers = 2))
            .expect("expands")
            .to_string();
        assert!(
            linear.contains(":: gpu_device :: shared :: DoubleBuffer :: < f32 , { 256 } >"),
            "{linear}"
        );
        assert!(linear.contains("2 * (256)"), "{linear}");
        let mapped = errors(quote!(f32; 256, map = A, buffers = 2));
        assert!(mapped[0].contains("leave `map` out"), "{mapped:?}");
        let phase = errors(quote!(f32; 16, 64, written_in = Reading, buffers = 2));
        assert!(phase[0].contains("leave `written_in` out"), "{phase:?}");
    }
}
