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
    match has_stable_repr(&input) {
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
        // SAFETY: the struct has a stable layout (checked above), is `Copy`
        // (required by the trait), and every field is `DeviceCopy` (the bounds).
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

fn has_stable_repr(input: &DeriveInput) -> syn::Result<bool> {
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
                content.parse::<TokenStream>()?;
            }
            Ok(())
        })?;
    }
    Ok(stable)
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
