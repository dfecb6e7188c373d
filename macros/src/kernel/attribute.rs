//! The arguments of `#[kernel(...)]`: the instances of a generic kernel
//! (types, or values of a const parameter) and the option `block = (x, y,
//! z)`.

use super::model::{Generic, Instance};
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Ident, ItemFn, Token, Type, TypePath};

/// The attribute's arguments: instances (types, or values for a const
/// parameter) and the option `block = ...`, in any order.
pub fn parse_args(
    input: syn::parse::ParseStream,
    is_const: bool,
) -> syn::Result<(Vec<TokenStream>, Option<[syn::Expr; 3]>)> {
    let mut instances = Vec::new();
    let mut block = None;
    while !input.is_empty() {
        if input.peek(Ident) && input.peek2(Token![=]) && !input.peek2(Token![==]) {
            let option: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            if option != "block" {
                return Err(syn::Error::new_spanned(
                    &option,
                    format!("unknown #[kernel] option `{option}`: the option is `block = (x, y, z)`, the only block shape the kernel runs in"),
                ));
            }
            let value: syn::Expr = input.parse()?;
            if block.is_some() {
                return Err(syn::Error::new_spanned(&value, "`block` is given twice"));
            }
            block = Some(block_extents(value)?);
        } else if is_const {
            instances.push(input.parse::<syn::Expr>()?.to_token_stream());
        } else {
            instances.push(input.parse::<Type>()?.to_token_stream());
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    Ok((instances, block))
}

/// `(x, y, z)`, `(x, y)`, `(x)` or `x`: three extents, the missing ones 1.
fn block_extents(value: syn::Expr) -> syn::Result<[syn::Expr; 3]> {
    let extents: Vec<syn::Expr> = match value {
        syn::Expr::Tuple(t) if (1..=3).contains(&t.elems.len()) => t.elems.into_iter().collect(),
        syn::Expr::Tuple(t) => {
            return Err(syn::Error::new_spanned(
                t,
                "`block` takes one to three extents: `block = (x, y, z)`",
            ))
        }
        syn::Expr::Paren(p) => vec![*p.expr],
        other => vec![other],
    };
    let one: syn::Expr = syn::parse_quote!(1);
    let mut it = extents.into_iter();
    Ok([
        it.next().expect("at least one extent"),
        it.next().unwrap_or_else(|| one.clone()),
        it.next().unwrap_or(one),
    ])
}

pub fn instances(
    name: &Ident,
    generic: Option<&Generic>,
    args: Vec<TokenStream>,
    function: &ItemFn,
) -> syn::Result<Vec<Instance>> {
    match (generic, args.is_empty()) {
        (None, true) => Ok(vec![Instance {
            arg: None,
            entry: name.to_string(),
            suffix: String::new(),
        }]),
        (None, false) => Err(syn::Error::new_spanned(
            &args[0],
            format!("`{name}` is not generic: write `#[kernel]` without a type list"),
        )),
        (Some(g), true) => {
            let example = if g.const_type.is_some() {
                "`#[kernel(16, 32)]`"
            } else {
                "`#[kernel(f32, f64)]`"
            };
            Err(syn::Error::new_spanned(
                &function.sig.generics,
                format!(
                    "generic kernel `{name}` must list the {} to compile it for, e.g. {example}: each becomes a PTX entry point `{name}_<{}>` (`{}` is chosen at the launch)",
                    if g.const_type.is_some() { "values" } else { "types" },
                    if g.const_type.is_some() { "value" } else { "type" },
                    g.name
                ),
            ))
        }
        (Some(g), false) => {
            let mut out: Vec<Instance> = Vec::new();
            for arg in args {
                let suffix = if g.const_type.is_some() {
                    value_suffix(&arg)?
                } else {
                    type_suffix(&syn::parse2(arg.clone())?)?
                };
                let entry = format!("{name}_{suffix}");
                if out.iter().any(|i| i.entry == entry) {
                    return Err(syn::Error::new_spanned(
                        &arg,
                        format!("`{entry}` is listed twice"),
                    ));
                }
                out.push(Instance {
                    arg: Some(arg),
                    entry,
                    suffix,
                });
            }
            Ok(out)
        }
    }
}

/// The part of an entry point's name that names a const instance: an
/// integer or `bool` literal.
fn value_suffix(arg: &TokenStream) -> syn::Result<String> {
    match syn::parse2::<syn::Lit>(arg.clone()) {
        Ok(syn::Lit::Int(i)) => Ok(i.base10_digits().to_string()),
        Ok(syn::Lit::Bool(b)) => Ok(b.value.to_string()),
        _ => Err(syn::Error::new_spanned(
            arg,
            "const kernel instances must be integer or `bool` literals, such as `16`",
        )),
    }
}

/// The part of an entry point's name that names the instance type.
fn type_suffix(ty: &Type) -> syn::Result<String> {
    match ty {
        Type::Path(TypePath { qself: None, path })
            if path.segments.last().is_some_and(|s| s.arguments.is_empty()) =>
        {
            Ok(path.segments.last().expect("checked").ident.to_string())
        }
        _ => Err(syn::Error::new_spanned(
            ty,
            "kernel instances must be named types such as `f32` or `Pixel`",
        )),
    }
}
