//! `gpu_assert!`: a kernel's assertion with a message. When the condition
//! is false, the message is built as a kernel print's is (`crate::print`)
//! and handed with the file, line and column to `gpu_device::assert::fail`,
//! which ends the launch with a report the host reads.

use crate::print::{build_line, parse_args, Input};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitStr, Token};

/// `condition` or `condition, "format", args...`.
struct Assertion {
    condition: Expr,
    message: Option<Input>,
}

impl Parse for Assertion {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let condition: Expr = input.parse()?;
        if input.is_empty() {
            return Ok(Assertion {
                condition,
                message: None,
            });
        }
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            return Ok(Assertion {
                condition,
                message: None,
            });
        }
        let format: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a format string literal after the condition: `gpu_assert!(x > 0, \"x is {}\", x)`",
            )
        })?;
        Ok(Assertion {
            condition,
            message: Some(Input {
                format,
                args: parse_args(input)?,
            }),
        })
    }
}

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let Assertion { condition, message } = syn::parse2(input)?;
    let printer = format_ident!("__gpu_message", span = Span::mixed_site());
    let device = quote!(::gpu_device);
    let build = match &message {
        Some(message) => build_line(message, "", &device, &printer)?,
        None => {
            // The condition as written, where the compiler keeps the source
            // (else as `stringify!` prints it); `%` doubles in the C format
            // string, then the NUL.
            let text = Ident::new("__GPU_CONDITION", Span::mixed_site());
            let condition_text = match condition.span().source_text() {
                Some(written) => {
                    let written = format!("assertion failed: {written}");
                    quote!(#written)
                }
                None => quote!(::core::concat!(
                    "assertion failed: ",
                    ::core::stringify!(#condition)
                )),
            };
            quote! {
                const #text: &str = #condition_text;
                let mut #printer = #device::print::Printer::<{ #text.len() * 2 + 1 }, 0>::new();
                #printer.literal(#text);
            }
        }
    };
    Ok(quote! {
        if !(#condition) {
            #build
            #device::assert::fail(&#printer, ::core::file!(), ::core::line!(), ::core::column!())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::expand;
    use quote::quote;

    #[test]
    fn the_message_is_built_only_when_the_condition_fails() {
        let out = expand(quote!(x < n, "x = {} of {}", x, n))
            .unwrap()
            .to_string();
        assert!(out.starts_with("if ! (x < n) {"), "{out}");
        assert!(out.contains("assert :: fail"), "{out}");
        let bare = expand(quote!(a == b)).unwrap().to_string();
        assert!(bare.contains("stringify ! (a == b)"), "{bare}");
        let err = expand(quote!(a, 5)).unwrap_err().to_string();
        assert!(
            err.contains("expected a format string literal after the condition"),
            "{err}"
        );
    }
}
