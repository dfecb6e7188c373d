//! What `#[vectorize]` reads of the attribute and the scalar function.

use crate::errors::Errors;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, ItemFn, Pat, ReturnType, Type, Visibility};

/// The form asked for in the attribute.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Form {
    /// `#[vectorize]`: an element-wise kernel over buffers of the arguments.
    Elementwise,
    /// `#[vectorize(reduce)]`: a reduction of one buffer with the function.
    Reduce,
}

/// One argument of the scalar function.
pub struct Arg {
    pub name: Ident,
    pub ty: Type,
}

/// A scalar function to vectorize.
pub struct Vectorized {
    pub form: Form,
    /// The function, emitted unchanged.
    pub function: ItemFn,
    pub name: Ident,
    pub vis: Visibility,
    pub args: Vec<Arg>,
    pub ret: Type,
}

const EXPECTED_ARGS: &str = "`#[vectorize]` (an element-wise kernel) or `#[vectorize(reduce)]` (a reduction, as Numba's `@cuda.reduce`)";

impl Vectorized {
    pub fn parse(args: TokenStream, item: TokenStream) -> syn::Result<Vectorized> {
        let function: ItemFn = syn::parse2(item)?;
        let mut errors = Errors::default();
        let form = errors.ok(parse_form(args)).unwrap_or(Form::Elementwise);
        let sig = &function.sig;
        if sig.generics.lt_token.is_some() {
            errors.push(syn::Error::new_spanned(
                &sig.generics,
                "a vectorized function cannot be generic: write one function per element type (each becomes a kernel)",
            ));
        }
        if let Some(asyncness) = &sig.asyncness {
            errors.push(syn::Error::new(
                asyncness.span(),
                "a vectorized function cannot be `async`",
            ));
        }
        if let Some(unsafety) = &sig.unsafety {
            errors.push(syn::Error::new(
                unsafety.span(),
                "a vectorized function cannot be `unsafe`: its kernel calls it for every element, with no one to uphold a contract",
            ));
        }
        let mut parsed = Vec::new();
        for input in &sig.inputs {
            if let Some(arg) = errors.ok(parse_arg(input)) {
                parsed.push(arg);
            }
        }
        if sig.inputs.is_empty() {
            errors.push(syn::Error::new(
                sig.paren_token.span.join(),
                "a vectorized function takes at least one argument: its kernel runs once per element of the argument buffers",
            ));
        }
        let ret = match &sig.output {
            ReturnType::Default => {
                errors.push(syn::Error::new(
                    sig.paren_token.span.join(),
                    "a vectorized function returns its result: add `-> T` (each call's value is one element of the output)",
                ));
                None
            }
            ReturnType::Type(_, ty) => errors
                .ok(check_value_type(ty, "return"))
                .map(|()| (**ty).clone()),
        };
        if form == Form::Reduce {
            if sig.inputs.len() != 2 && !sig.inputs.is_empty() {
                errors.push(syn::Error::new(
                    sig.inputs.span(),
                    "`#[vectorize(reduce)]` needs a function of two arguments of one type, returning that type: `fn(T, T) -> T`",
                ));
            }
            if let (Some(ret), 2) = (&ret, parsed.len()) {
                let want = ret.to_token_stream().to_string();
                for arg in &parsed {
                    if arg.ty.to_token_stream().to_string() != want {
                        errors.push(syn::Error::new(
                            arg.ty.span(),
                            format!("`#[vectorize(reduce)]` combines values of the result type: this argument must be `{want}`"),
                        ));
                    }
                }
            }
        }
        errors.finish()?;
        Ok(Vectorized {
            form,
            name: function.sig.ident.clone(),
            vis: function.vis.clone(),
            args: parsed,
            ret: ret.expect("no errors: the return type was read"),
            function,
        })
    }
}

fn parse_form(args: TokenStream) -> syn::Result<Form> {
    if args.is_empty() {
        return Ok(Form::Elementwise);
    }
    let ident: Ident = syn::parse2(args.clone())
        .map_err(|_| syn::Error::new_spanned(&args, format!("expected {EXPECTED_ARGS}")))?;
    if ident == "reduce" {
        Ok(Form::Reduce)
    } else {
        Err(syn::Error::new(
            ident.span(),
            format!("unknown option `{ident}`: expected {EXPECTED_ARGS}"),
        ))
    }
}

fn parse_arg(input: &FnArg) -> syn::Result<Arg> {
    let typed = match input {
        FnArg::Receiver(receiver) => {
            return Err(syn::Error::new(
                receiver.span(),
                "a vectorized function is a free function of scalars: it cannot take `self`",
            ))
        }
        FnArg::Typed(typed) => typed,
    };
    let name = match &*typed.pat {
        Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
        other => {
            return Err(syn::Error::new(
                other.span(),
                "a vectorized function's argument is a plain name (`x: f32`): each names an argument buffer of the launcher",
            ))
        }
    };
    check_value_type(&typed.ty, "argument")?;
    Ok(Arg {
        name,
        ty: (*typed.ty).clone(),
    })
}

/// A scalar taken or returned by value: a path (`f32`, a `DeviceCopy` struct)
/// or an array of them; `DeviceCopy` itself is checked by the kernel.
fn check_value_type(ty: &Type, role: &str) -> syn::Result<()> {
    let why = match ty {
        Type::Path(path) if path.qself.is_none() => return Ok(()),
        Type::Array(array) => return check_value_type(&array.elem, role),
        Type::Paren(inner) => return check_value_type(&inner.elem, role),
        Type::Reference(_) => "a reference: an element crosses to the device by copy, so it is a `DeviceCopy` value such as `f32`",
        Type::Ptr(_) => "a raw pointer: an element is a `DeviceCopy` value such as `f32`",
        Type::Slice(_) => "a slice: an element is one scalar value, the launcher takes the buffers",
        Type::ImplTrait(_) | Type::TraitObject(_) => "a trait type: an element has one concrete `DeviceCopy` type",
        Type::Tuple(t) if t.elems.is_empty() => "`()`: an element is a `DeviceCopy` value such as `f32`",
        _ => "not a scalar type: an element is a `DeviceCopy` value such as `f32` or a `#[repr(C)]` struct",
    };
    Err(syn::Error::new(
        ty.span(),
        format!("a vectorized function's {role} type cannot be {why}"),
    ))
}
