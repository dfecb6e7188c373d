//! `#[derive(DeviceCopy)]`.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput};

pub fn expand(item: TokenStream) -> syn::Result<TokenStream> {
    let input: DeriveInput = syn::parse2(item)?;
    let fields = match &input.data {
        Data::Struct(data) => &data.fields,
        Data::Enum(data) => {
            return Err(syn::Error::new(
                data.enum_token.span,
                "DeviceCopy cannot be derived for enums: a kernel could produce a discriminant that is not a variant; use a struct of integers",
            ))
        }
        Data::Union(data) => {
            return Err(syn::Error::new(
                data.union_token.span,
                "DeviceCopy cannot be derived for unions",
            ))
        }
    };
    if !has_stable_repr(&input)? {
        return Err(syn::Error::new(
            input.ident.span(),
            format!(
                "`{}` needs `#[repr(C)]` (or `#[repr(transparent)]`) to derive DeviceCopy: host and device must agree on its layout",
                input.ident
            ),
        ));
    }
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut predicates: Vec<TokenStream> = where_clause
        .map(|w| w.predicates.iter().map(|p| quote!(#p)).collect())
        .unwrap_or_default();
    for field in fields {
        let ty = &field.ty;
        predicates.push(quote_spanned!(ty.span()=> #ty: ::gpu_device::DeviceCopy));
    }
    Ok(quote! {
        // SAFETY: the struct has a stable layout (checked above), is `Copy`
        // (required by the trait), and every field is `DeviceCopy` (the bounds).
        unsafe impl #impl_generics ::gpu_device::DeviceCopy for #ident #ty_generics
        where #(#predicates),* {}
    })
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
}
