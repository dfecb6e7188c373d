//! The model of a kernel: its name, its instances and its parameters, each
//! classified by how it crosses from host to device.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{
    Attribute, FnArg, GenericArgument, GenericParam, Ident, ItemFn, Pat, PathArguments, ReturnType,
    Token, Type, TypePath, Visibility,
};

/// A parsed `#[kernel]` function.
pub struct Kernel {
    /// The function as written; its body becomes the device-side body.
    pub function: ItemFn,
    /// Doc comments and other outer attributes, copied onto the launcher module.
    pub docs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    /// The single type parameter of a generic kernel.
    pub type_param: Option<Ident>,
    /// One entry point per instance: the whole kernel for a non-generic kernel.
    pub instances: Vec<Instance>,
    pub params: Vec<Param>,
}

/// One monomorphised entry point.
pub struct Instance {
    /// The type substituted for the type parameter (`None` for a non-generic kernel).
    pub ty: Option<Type>,
    /// The PTX entry point name.
    pub entry: String,
}

pub struct Param {
    pub name: Ident,
    pub kind: ParamKind,
    /// The type as written, for spans.
    pub ty: Type,
}

/// How a parameter crosses to the device.
pub enum ParamKind {
    /// A primitive integer, float or `bool`, by value.
    Scalar(Type),
    /// `&[T]`: read by every thread; passed as pointer and length.
    Input(Type),
    /// `DisjointSlice<T>`: written by each thread at its own index.
    Output(Type),
    /// `&[DeviceAtomic<T>]`: updated atomically by any thread.
    Atomic(Type),
    /// Any other type by value: must be `DeviceCopy`.
    Value(Type),
}

const SCALARS: &[&str] = &[
    "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize", "f32", "f64", "bool",
];

const SUPPORTED: &str = "kernel parameters may be scalars (integers, floats, bool), `&[T]` (read-only input), `DisjointSlice<T>` (output written at each thread's own index), `&[DeviceAtomic<T>]` (atomic updates), or `#[repr(C)]` structs that derive `DeviceCopy`";

impl Kernel {
    pub fn parse(args: TokenStream, item: TokenStream) -> syn::Result<Kernel> {
        let function: ItemFn = syn::parse2(item)?;
        let instance_types: Vec<Type> = if args.is_empty() {
            Vec::new()
        } else {
            syn::parse::Parser::parse2(Punctuated::<Type, Token![,]>::parse_terminated, args)?
                .into_iter()
                .collect()
        };
        check_signature(&function)?;
        let type_param = type_parameter(&function)?;
        let name = function.sig.ident.clone();
        let instances = instances(&name, type_param.as_ref(), instance_types, &function)?;
        let params = function
            .sig
            .inputs
            .iter()
            .map(Param::parse)
            .collect::<syn::Result<Vec<_>>>()?;
        let docs = function
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("doc"))
            .cloned()
            .collect();
        Ok(Kernel {
            docs,
            vis: function.vis.clone(),
            name,
            type_param,
            instances,
            params,
            function,
        })
    }
}

fn check_signature(function: &ItemFn) -> syn::Result<()> {
    let sig = &function.sig;
    let reject = |tokens: &dyn ToTokens, what: &str| {
        Err(syn::Error::new_spanned(
            tokens.to_token_stream(),
            format!("a #[kernel] cannot be {what}"),
        ))
    };
    if let Some(t) = &sig.constness {
        return reject(t, "`const`");
    }
    if let Some(t) = &sig.asyncness {
        return reject(t, "`async`");
    }
    if let Some(t) = &sig.unsafety {
        return reject(
            t,
            "`unsafe`: its launcher must be safe to call; use `unsafe` blocks inside the body",
        );
    }
    if let Some(t) = &sig.abi {
        return reject(t, "`extern`: #[kernel] chooses the ABI");
    }
    if let Some(t) = &sig.variadic {
        return reject(t, "variadic");
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        return Err(syn::Error::new_spanned(
            ty,
            "a #[kernel] returns nothing: write results into a `DisjointSlice<T>` parameter",
        ));
    }
    Ok(())
}

fn type_parameter(function: &ItemFn) -> syn::Result<Option<Ident>> {
    let mut found: Option<Ident> = None;
    for param in &function.sig.generics.params {
        match param {
            GenericParam::Lifetime(_) => {}
            GenericParam::Const(c) => {
                return Err(syn::Error::new_spanned(
                    c,
                    "const generic kernels are not supported: pass the value as a scalar parameter",
                ))
            }
            GenericParam::Type(t) => {
                if found.is_some() {
                    return Err(syn::Error::new_spanned(
                        t,
                        "a #[kernel] may have at most one type parameter",
                    ));
                }
                found = Some(t.ident.clone());
            }
        }
    }
    Ok(found)
}

fn instances(
    name: &Ident,
    type_param: Option<&Ident>,
    types: Vec<Type>,
    function: &ItemFn,
) -> syn::Result<Vec<Instance>> {
    match (type_param, types.is_empty()) {
        (None, true) => Ok(vec![Instance {
            ty: None,
            entry: name.to_string(),
        }]),
        (None, false) => Err(syn::Error::new_spanned(
            &types[0],
            format!("`{name}` is not generic: write `#[kernel]` without a type list"),
        )),
        (Some(t), true) => Err(syn::Error::new_spanned(
            &function.sig.generics,
            format!(
                "generic kernel `{name}` must list the types to compile it for, e.g. `#[kernel(f32, f64)]`: each becomes a PTX entry point `{name}_<type>` (`{t}` is chosen from the launch's arguments)"
            ),
        )),
        (Some(_), false) => {
            let mut out: Vec<Instance> = Vec::new();
            for ty in types {
                let suffix = type_suffix(&ty)?;
                let entry = format!("{name}_{suffix}");
                if out.iter().any(|i| i.entry == entry) {
                    return Err(syn::Error::new_spanned(
                        &ty,
                        format!("`{entry}` is listed twice"),
                    ));
                }
                out.push(Instance {
                    ty: Some(ty),
                    entry,
                });
            }
            Ok(out)
        }
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

impl Param {
    fn parse(arg: &FnArg) -> syn::Result<Param> {
        let typed = match arg {
            FnArg::Receiver(r) => {
                return Err(syn::Error::new_spanned(r, "a #[kernel] cannot take `self`"))
            }
            FnArg::Typed(t) => t,
        };
        let name = match &*typed.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                return Err(syn::Error::new_spanned(
                    other,
                    "kernel parameters must be plain names (patterns are not supported)",
                ))
            }
        };
        let ty = (*typed.ty).clone();
        let kind = classify(&ty)?;
        Ok(Param { name, kind, ty })
    }
}

fn classify(ty: &Type) -> syn::Result<ParamKind> {
    match ty {
        Type::Reference(r) => {
            let Type::Slice(slice) = &*r.elem else {
                return Err(unsupported(ty, "references must be to slices: `&[T]`"));
            };
            if r.mutability.is_some() {
                return Err(syn::Error::new_spanned(
                    ty,
                    "`&mut [T]` would hand every thread the same mutable slice, a data race: take `DisjointSlice<T>` (each thread writes its own element) or `&[DeviceAtomic<T>]` (atomic updates)",
                ));
            }
            let elem = &*slice.elem;
            if let Some(inner) = single_generic(elem, "DeviceAtomic") {
                return Ok(ParamKind::Atomic(inner));
            }
            check_element(elem)?;
            Ok(ParamKind::Input(elem.clone()))
        }
        Type::Path(p) if p.qself.is_none() => {
            if let Some(inner) = single_generic(ty, "DisjointSlice") {
                check_element(&inner)?;
                return Ok(ParamKind::Output(inner));
            }
            if let Some(ident) = p.path.get_ident() {
                if SCALARS.contains(&ident.to_string().as_str()) {
                    return Ok(ParamKind::Scalar(ty.clone()));
                }
            }
            if p.path.segments.iter().any(|s| !s.arguments.is_empty()) {
                return Err(unsupported(ty, "generic types other than `DisjointSlice<T>` cannot cross to the device"));
            }
            Ok(ParamKind::Value(ty.clone()))
        }
        Type::Ptr(_) => Err(unsupported(
            ty,
            "raw pointers are not accepted: take `&[T]` or `DisjointSlice<T>` so the launcher can check the buffer",
        )),
        _ => Err(unsupported(ty, "this type cannot cross to the device")),
    }
}

/// Slice elements must be scalars, a type parameter or a named struct.
fn check_element(elem: &Type) -> syn::Result<()> {
    match elem {
        // `f32`, `Pixel`, `T`, or an associated type such as `<T as Sum>::Acc`.
        Type::Path(p) if p.path.segments.iter().all(|s| s.arguments.is_empty()) => Ok(()),
        Type::Array(_) => Ok(()),
        _ => Err(unsupported(
            elem,
            "slice elements must be scalars or `DeviceCopy` structs",
        )),
    }
}

/// `Name<T>` (or `Name<'a, T>`) as the last path segment: returns `T`.
fn single_generic(ty: &Type, name: &str) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    });
    let first = types.next()?;
    types.next().is_none().then_some(first)
}

fn unsupported(ty: &Type, why: &str) -> syn::Error {
    syn::Error::new(
        ty.span(),
        format!(
            "unsupported kernel parameter type `{}`: {why}; {SUPPORTED}",
            type_name(ty)
        ),
    )
}

/// A type as a person writes it: `Vec<f32>`, `*const f32`, `&[u8]`.
pub fn type_name(ty: &Type) -> String {
    let mut text = ty.to_token_stream().to_string();
    for (spaced, tight) in [
        (" < ", "<"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("& ", "&"),
        ("* const ", "*const "),
        ("* mut ", "*mut "),
        ("[ ", "["),
        (" ]", "]"),
        (" ; ", "; "),
        (" :: ", "::"),
    ] {
        text = text.replace(spaced, tight);
    }
    text
}

impl Kernel {
    /// The span of the kernel's name, for generated items.
    pub fn span(&self) -> Span {
        self.name.span()
    }
}
