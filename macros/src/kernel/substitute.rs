//! Substitution of a generic kernel's parameter by an instance's type or
//! value, on tokens: in types, in the body, and inside macro invocations
//! (`shared_array!(T; TILE * TILE)`), so nothing in an instance's body is
//! generic when it is compiled.

use proc_macro2::{Group, Ident, TokenStream, TokenTree};

/// `tokens` with every identifier `param` (not a lifetime `'param`) replaced
/// by `with`.
pub fn substitute(tokens: TokenStream, param: &Ident, with: &TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut after_quote = false;
    for tree in tokens {
        let next = match tree {
            TokenTree::Ident(ref i) if i == param && !after_quote => {
                out.extend(with.clone());
                after_quote = false;
                continue;
            }
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), substitute(g.stream(), param, with));
                group.set_span(g.span());
                TokenTree::Group(group)
            }
            other => other,
        };
        after_quote = matches!(&next, TokenTree::Punct(p) if p.as_char() == '\'');
        out.push(next);
    }
    out.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::substitute;
    use quote::{format_ident, quote};

    #[test]
    fn replaces_identifiers_everywhere_but_lifetimes() {
        let out = substitute(
            quote!(
                fn k<'T>(x: &'T [T]) {
                    let a = shared_array!(T; N * T::LEN);
                }
            ),
            &format_ident!("T"),
            &quote!(f32),
        );
        assert_eq!(
            out.to_string(),
            quote!(
                fn k<'T>(x: &'T [f32]) {
                    let a = shared_array!(f32; N * f32::LEN);
                }
            )
            .to_string()
        );
    }
}
