//! `#[derive(DeviceCopy)]`.

use crate::errors::Errors;
use crate::path_option::{respanned, Key, PathOptions};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::ParseStream;
use syn::spanned::Spanned;
use syn::{Attribute, Data, DeriveInput, Token};

/// The helper attribute that overrides the path of `gpu_device`.
const HELPER: &str = "device_copy";

pub fn expand(item: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(item)?;
    let mut errors = Errors::default();
    let device = device_crate(&input.attrs, &mut errors);
    let fields = match &input.data {
        Data::Struct(data) => Some(&data.fields),
        Data::Enum(data) => {
            errors.push(syn::Error::new(
                data.enum_token.span,
                "DeviceCopy cannot be derived for enums: a kernel could produce a discriminant that is not a variant; use a struct of integers",
            ));
            None
        }
        Data::Union(data) => {
            errors.push(syn::Error::new(
                data.union_token.span,
                "DeviceCopy cannot be derived for unions",
            ));
            None
        }
    };
    for field in fields.into_iter().flatten() {
        for attr in field.attrs.iter().filter(|a| a.path().is_ident(HELPER)) {
            errors.push(syn::Error::new_spanned(
                attr,
                "`#[device_copy(...)]` belongs on the struct, not on a field",
            ));
        }
    }
    match has_stable_repr(&input, &mut errors) {
        Ok(true) => {}
        Ok(false) => errors.push(syn::Error::new(
            input.ident.span(),
            format!(
                "`{}` needs `#[repr(C)]` (or `#[repr(transparent)]`) to derive DeviceCopy: host and device must agree on its layout",
                input.ident
            ),
        )),
        Err(e) => errors.push(e),
    }
    errors.finish()?;
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut predicates: Vec<TokenStream> = where_clause
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect())
        .unwrap_or_default();
    for field in fields.into_iter().flatten() {
        let ty = &field.ty;
        // The bound's error is reported at the field's type.
        let device = respanned(&device, ty.span());
        predicates.push(quote_spanned!(ty.span()=> #ty: #device::DeviceCopy));
    }
    // An error about the check is reported at the overriding path.
    let check = match device.segments.first() {
        Some(first) => quote_spanned!(first.ident.span()=> const __GPU_DEVICE_COPY: () = ();),
        None => quote!(
            const __GPU_DEVICE_COPY: () = ();
        ),
    };
    // A non-generic struct's alignment is checked where it is defined (an
    // `align(N)` field type of a hand-written impl, say); a generic one's,
    // where the runtime allocates or launches with it (a post-monomorphisation
    // check, `require_device_align`).
    let align_check = input.generics.params.is_empty().then(|| {
        let max = MAX_ALIGN as usize;
        let message = format!(
            "`{ident}` is aligned to more than {max} bytes, more than a DeviceCopy type may be: device memory is allocated aligned to {max} bytes, so a kernel would see its elements misaligned"
        );
        quote! {
            const _: () = ::core::assert!(::core::mem::align_of::<#ident>() <= #max, #message);
        }
    });
    // The layout fingerprint: each field's offset and own fingerprint, so
    // that host and device builds that disagree on a field disagree on it
    // (errors about it, as the check's, at the overriding path).
    let path_span = device
        .segments
        .first()
        .map_or_else(proc_macro2::Span::call_site, |s| s.ident.span());
    let layout_fields = fields.into_iter().flatten().enumerate().map(|(i, field)| {
        let ty = &field.ty;
        let member = match &field.ident {
            Some(name) => quote!(#name),
            None => {
                let index = syn::Index::from(i);
                quote!(#index)
            }
        };
        quote_spanned!(path_span=> (::core::mem::offset_of!(Self, #member), <#ty as #device::DeviceCopy>::__GPU_LAYOUT))
    });
    let layout = quote_spanned! {path_span=>
        const __GPU_LAYOUT: u64 =
            #device::__private::interface::struct_layout::<Self>(&[#(#layout_fields),*]);
    };
    Ok(quote! {
        #align_check
        // SAFETY: the struct has a stable layout (checked above), is `Copy`
        // (required by the trait), every field is `DeviceCopy` (the bounds),
        // and it is aligned to at most 256 bytes (its own `align(N)` checked
        // above, its fields' by their `DeviceCopy`).
        // The trait is `gpu_device`'s: `::gpu_device`'s, or the one the user's
        // `unsafe(crate = "...")` promised (a trait without the hidden
        // `__GPU_DEVICE_COPY` is moreover an error).
        unsafe impl #impl_generics #device::DeviceCopy for #ident #ty_generics
        where #(#predicates),* {
            #check
            #layout
        }
    })
}

/// `gpu_device`'s path: `::gpu_device`, or the one `#[device_copy(unsafe(crate =
/// "..."))]` gives.
fn device_crate(attrs: &[Attribute], errors: &mut Errors) -> syn::Path {
    const KEYS: &[Key] = &[Key::naming_crate("crate", "my_gpu::device", "gpu_device")];
    let mut options = PathOptions::new(
        KEYS,
        "`unsafe(crate = \"path\")` (the path to the `gpu_device` crate)",
    );
    for attr in attrs.iter().filter(|a| a.path().is_ident(HELPER)) {
        let parsed = attr.parse_args_with(|input: ParseStream| {
            while !input.is_empty() {
                if !PathOptions::starts_option(input) {
                    return Err(input.error(
                        "expected `unsafe(crate = \"path\")`, the path to the `gpu_device` crate",
                    ));
                }
                options.parse_one(input, errors)?;
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
            }
            Ok(())
        });
        if let Err(e) = parsed {
            errors.push(e);
        }
    }
    options
        .get("crate")
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(::gpu_device))
}

/// The largest alignment a `DeviceCopy` type may have
/// (`gpu_device::MAX_DEVICE_ALIGN`): that of every device allocation.
const MAX_ALIGN: u64 = 256;

/// Whether the struct has a stable layout (`repr(C)` or `repr(transparent)`);
/// an `align(N)` above [`MAX_ALIGN`] goes to `errors`, spanned on `N`.
fn has_stable_repr(input: &DeriveInput, errors: &mut Errors) -> syn::Result<bool> {
    let mut stable = false;
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("repr")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("C") || meta.path.is_ident("transparent") {
                stable = true;
            }
            // `align(N)` and `packed(N)` carry arguments; accept and skip them
            // (the whole parenthesised group, or parsing stops at `N`).
            if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                let argument = content.parse::<TokenStream>()?;
                if meta.path.is_ident("align") {
                    check_align(argument, errors);
                }
            }
            Ok(())
        })?;
    }
    Ok(stable)
}

/// Refuses `align(N)` with `N` above [`MAX_ALIGN`]: device allocations are
/// aligned to 256 bytes, so a kernel's `&[T]` of such elements would be
/// misaligned. (rustc checks that `N` is a power of two.)
fn check_align(argument: TokenStream, errors: &mut Errors) {
    let Ok(n) = syn::parse2::<syn::LitInt>(argument) else {
        return;
    };
    if n.base10_parse::<u64>().is_ok_and(|v| v > MAX_ALIGN) {
        errors.push(syn::Error::new(
            n.span(),
            format!(
                "`align({n})` is more than a DeviceCopy type may have: device memory is allocated aligned to {MAX_ALIGN} bytes (CUDA's allocations and the simulator's), so a kernel would see these elements misaligned; use `align({MAX_ALIGN})` at most"
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::expand;
    use quote::quote;

    #[test]
    fn aligned_and_packed_repr_c_structs_derive() {
        for item in [
            quote!(
                #[repr(C, align(16))]
                struct F4 {
                    x: f32,
                    y: f32,
                    z: f32,
                    w: f32,
                }
            ),
            quote!(
                #[repr(align(8), C)]
                struct A {
                    x: u32,
                }
            ),
            quote!(
                #[repr(C, packed(2))]
                struct P {
                    x: u8,
                    y: u32,
                }
            ),
        ] {
            let out = expand(item).expect("derives").to_string();
            assert!(out.contains("DeviceCopy"), "{out}");
        }
        assert!(expand(quote!(
            #[repr(align(16))]
            struct N {
                x: f32,
            }
        ))
        .is_err());
    }

    #[test]
    fn alignments_above_what_allocations_give_are_refused() {
        let err = expand(quote!(
            #[repr(C, align(4096))]
            struct Page {
                x: u8,
            }
        ))
        .expect_err("refused")
        .to_string();
        assert!(
            err.starts_with("`align(4096)` is more than a DeviceCopy type may have: device memory is allocated aligned to 256 bytes"),
            "{err}"
        );
        let out = expand(quote!(
            #[repr(C, align(256))]
            struct Line {
                x: u8,
            }
        ))
        .expect("derives")
        .to_string();
        // The struct's own alignment is checked where it is defined (a field
        // may carry a larger one).
        assert!(
            out.contains(":: core :: mem :: align_of :: < Line > () <= 256usize"),
            "{out}"
        );
        // A generic struct's is checked where the runtime uses it.
        let generic = expand(quote!(
            #[repr(C)]
            struct Pair<T> {
                a: T,
                b: T,
            }
        ))
        .expect("derives")
        .to_string();
        assert!(!generic.contains("align_of"), "{generic}");
    }

    #[test]
    fn the_device_crate_can_be_overridden() {
        let out = expand(quote!(
            #[derive(DeviceCopy)]
            #[device_copy(unsafe(crate = "crate::re::dev"))]
            #[repr(C)]
            struct P {
                x: f32,
            }
        ))
        .expect("derives")
        .to_string();
        assert!(
            out.contains("unsafe impl crate :: re :: dev :: DeviceCopy for P"),
            "{out}"
        );
        assert!(
            out.contains("f32 : crate :: re :: dev :: DeviceCopy"),
            "{out}"
        );
        assert!(!out.contains("gpu_device"), "{out}");
        // The impl names an item only `gpu_device::DeviceCopy` has.
        assert!(out.contains("const __GPU_DEVICE_COPY : () = () ;"), "{out}");
    }

    #[test]
    fn every_problem_is_reported() {
        let all: Vec<String> = expand(quote!(
            #[device_copy(krate = "dev")]
            #[device_copy(unsafe(crate = dev))]
            struct P {
                #[device_copy(crate = "dev")]
                x: f32,
            }
        ))
        .expect_err("rejected")
        .into_iter()
        .map(|e| e.to_string())
        .collect();
        assert_eq!(all.len(), 4, "{all:?}");
        assert!(all[0].contains("unknown option `krate`"), "{all:?}");
        assert!(all[1].contains("string literal"), "{all:?}");
        assert!(all[2].contains("belongs on the struct"), "{all:?}");
        assert!(all[3].contains("needs `#[repr(C)]`"), "{all:?}");
        let bare = expand(quote!(
            #[device_copy]
            #[repr(C)]
            struct P {
                x: f32,
            }
        ))
        .expect_err("rejected")
        .to_string();
        assert!(
            bare.contains("expected attribute arguments in parentheses"),
            "{bare}"
        );
        // The crate's path is the user's promise, written `unsafe(...)`.
        let promise = expand(quote!(
            #[device_copy(crate = "dev")]
            #[repr(C)]
            struct P {
                x: f32,
            }
        ))
        .expect_err("rejected")
        .to_string();
        assert!(
            promise.starts_with("write `unsafe(crate = \"dev\")`: the generated code calls `unsafe` functions of `gpu_device`"),
            "{promise}"
        );
    }
}
