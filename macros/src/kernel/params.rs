//! A kernel's parameters, each classified by how it crosses from host to
//! device (or is built on the device).

use crate::errors::Errors;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Ident, Pat, PathArguments, Type};

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
    /// `DisjointSlice<T>` or `DisjointSlice<T, M>`: written by each thread
    /// at the elements its map `M` gives it (by default its own index).
    Output(Type, Option<Type>),
    /// `DisjointSlice2d<T>` or `DisjointSlice2d<T, R>` (or the `U32` forms,
    /// `DisjointSlice2dU32<T, R>`): a row-major matrix; passed as pointer,
    /// element count, rows, cols (`usize`, or `u32` for the `U32` forms).
    Output2d(Type, Option<syn::Expr>, MatrixIndex),
    /// `DisjointSlice3d<T>`: passed as pointer, depth, rows, cols.
    Output3d(Type),
    /// `DisjointMatrix<T, M>`: a row-major matrix divided by the map `M`;
    /// passed as a `DisjointSlice2d`.
    MappedMatrix(Type, Type),
    /// `Block`: the shared-memory phase token, built on the device.
    Block,
    /// `DynamicShared<T>`: the dynamic shared memory, built on the device.
    DynamicShared(Type),
    /// `Grid`: the grid-sync token of a cooperative kernel, built on the
    /// device.
    Grid,
    /// `Cluster`: the cluster witness of a cluster kernel, built on the
    /// device.
    Cluster,
    /// `&[DeviceAtomic<T>]`: updated atomically by any thread.
    Atomic(Type),
    /// `TensorMap2d<T, ROWS, COLS, S>`: a tensor map of a buffer of `T`
    /// (the element, then the parameter's type as written); passed as the
    /// address of its encoded map in global memory.
    TensorMap(Type, Type),
    /// `TensorMapOut<T, B, S>`: a tensor map of a buffer of `T` written by
    /// stores, one box a block (the element, then the type as written);
    /// passed as the address of its encoded map and box counts.
    TensorMapOut(Type, Type),
    /// Any other type by value: must be `DeviceCopy`.
    Value(Type),
}

impl ParamKind {
    /// The element type (slices, matrices, dynamic shared memory) or the
    /// value type (scalars, structs); `None` for `Block`.
    pub fn element(&self) -> Option<&Type> {
        match self {
            ParamKind::Scalar(t)
            | ParamKind::Value(t)
            | ParamKind::Input(t)
            | ParamKind::Output(t, _)
            | ParamKind::MappedMatrix(t, _)
            | ParamKind::Output2d(t, _, _)
            | ParamKind::Output3d(t)
            | ParamKind::Atomic(t)
            | ParamKind::TensorMap(t, _)
            | ParamKind::TensorMapOut(t, _)
            | ParamKind::DynamicShared(t) => Some(t),
            ParamKind::Block | ParamKind::Grid | ParamKind::Cluster => None,
        }
    }

    /// The ownership map an output names (`DisjointSlice<T, M>`,
    /// `DisjointMatrix<T, M>`), as written.
    pub fn map(&self) -> Option<&Type> {
        match self {
            ParamKind::Output(_, map) => map.as_ref(),
            ParamKind::MappedMatrix(_, map) => Some(map),
            _ => None,
        }
    }
}

/// The integer type of a matrix output's extents and offsets.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MatrixIndex {
    /// `DisjointSlice2d`: any matrix a buffer can hold.
    Usize,
    /// `DisjointSlice2dU32`: at most `u32::MAX` elements (the launcher checks).
    U32,
}

const SCALARS: &[&str] = &[
    "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize", "f32", "f64", "bool",
];

impl Param {
    /// The parameter `arg`, or every error found in it (its pattern and its
    /// type are checked independently).
    pub fn parse(arg: &FnArg) -> syn::Result<Param> {
        let typed = match arg {
            FnArg::Receiver(r) => {
                return Err(syn::Error::new_spanned(r, "a #[kernel] cannot take `self`"))
            }
            FnArg::Typed(t) => t,
        };
        let mut errors = Errors::default();
        // The host and the device compile the kernel from the same
        // parameters: a parameter that exists on one target only would
        // shift every argument after it.
        for attr in &typed.attrs {
            if attr.path().is_ident("cfg") || attr.path().is_ident("cfg_attr") {
                errors.push(syn::Error::new_spanned(
                    attr,
                    "a kernel parameter cannot be conditional: host and device would disagree on the parameters; choose the kernel, or the parameter's value, with `cfg` instead",
                ));
            }
        }
        let name = match &*typed.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(p.ident.clone()),
            other => {
                errors.push(syn::Error::new_spanned(
                    other,
                    "kernel parameters must be plain names (patterns are not supported)",
                ));
                None
            }
        };
        let ty = (*typed.ty).clone();
        let kind = errors.ok(classify(&ty));
        errors.finish()?;
        match (name, kind) {
            (Some(name), Some(kind)) => Ok(Param { name, kind, ty }),
            _ => unreachable!("an error was recorded for what is missing"),
        }
    }
}

/// Whether `ty` names a parameter built on the device (`Block`,
/// `DynamicShared<T>`, `Grid`), well formed or not: the launcher takes no
/// argument for it.
pub fn is_device_built(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Block" || s.ident == "DynamicShared" || s.ident == "Grid" || s.ident == "Cluster"))
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
            if let Some((inner, map)) = generic_pair(ty, "DisjointSlice") {
                check_element(&inner)?;
                return Ok(ParamKind::Output(inner, map));
            }
            if let Some((inner, map)) = generic_pair(ty, "DisjointMatrix") {
                check_element(&inner)?;
                let Some(map) = map else {
                    return Err(syn::Error::new_spanned(
                        ty,
                        "a `DisjointMatrix` names its ownership map: `DisjointMatrix<T, RowPerBlock>`, `DisjointMatrix<T, Tiles<R, C>>` (see `gpu_device::ownership`)",
                    ));
                };
                return Ok(ParamKind::MappedMatrix(inner, map));
            }
            if let Some((inner, rows_per_thread, index)) = matrix_output(ty) {
                check_element(&inner)?;
                return Ok(ParamKind::Output2d(inner, rows_per_thread, index));
            }
            if let Some(inner) = single_generic(ty, "DisjointSlice3d") {
                check_element(&inner)?;
                return Ok(ParamKind::Output3d(inner));
            }
            if let Some(inner) = first_type_argument(ty, "TensorMap2d")
                .or_else(|| first_type_argument(ty, "TensorMapNd"))
            {
                return Ok(ParamKind::TensorMap(inner, ty.clone()));
            }
            if let Some(inner) = first_type_argument(ty, "TensorMapOut") {
                return Ok(ParamKind::TensorMapOut(inner, ty.clone()));
            }
            if let Some(inner) = single_generic(ty, "DynamicShared") {
                return Ok(ParamKind::DynamicShared(inner));
            }
            if p.path.segments.last().is_some_and(|s| s.ident == "Block") {
                return phase_token(ty);
            }
            if p.path.segments.last().is_some_and(|s| s.ident == "Grid" && s.arguments.is_empty()) {
                return Ok(ParamKind::Grid);
            }
            if p.path.segments.last().is_some_and(|s| s.ident == "Cluster" && s.arguments.is_empty()) {
                return Ok(ParamKind::Cluster);
            }
            if let Some(ident) = p.path.get_ident() {
                if SCALARS.contains(&ident.to_string().as_str()) {
                    return Ok(ParamKind::Scalar(ty.clone()));
                }
            }
            if p.path.segments.iter().any(|s| !s.arguments.is_empty()) {
                return Err(unsupported(ty, "generic types other than the ones below cannot cross to the device"));
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

/// `Block` or `Block<Writing>`: a kernel starts in the Writing phase.
fn phase_token(ty: &Type) -> syn::Result<ParamKind> {
    let Type::Path(p) = ty else {
        unreachable!("checked by the caller")
    };
    match &p.path.segments.last().expect("non-empty").arguments {
        PathArguments::None => Ok(ParamKind::Block),
        PathArguments::AngleBracketed(args)
            if args.args.len() == 1
                && matches!(&args.args[0], GenericArgument::Type(Type::Path(w)) if w.path.segments.last().is_some_and(|s| s.ident == "Writing")) =>
        {
            Ok(ParamKind::Block)
        }
        _ => Err(syn::Error::new_spanned(
            ty,
            "a kernel's phase token starts in the Writing phase: declare it as `block: Block` (or `Block<Writing>`)",
        )),
    }
}

/// `DisjointSlice2d<T>` or `DisjointSlice2d<T, R>` (optionally with a
/// lifetime), or the same of `DisjointSlice2dU32`: returns `T`, `R` and
/// which of the two.
fn matrix_output(ty: &Type) -> Option<(Type, Option<syn::Expr>, MatrixIndex)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    let index = if last.ident == "DisjointSlice2d" {
        MatrixIndex::Usize
    } else if last.ident == "DisjointSlice2dU32" {
        MatrixIndex::U32
    } else {
        return None;
    };
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut rest = args
        .args
        .iter()
        .filter(|a| !matches!(a, GenericArgument::Lifetime(_)));
    let elem = match rest.next()? {
        GenericArgument::Type(t) => t.clone(),
        _ => return None,
    };
    let rows_per_thread = match rest.next() {
        None => None,
        Some(GenericArgument::Const(e)) => Some(e.clone()),
        // `DisjointSlice2d<T, R>` with `R` a named const parses as a type.
        Some(GenericArgument::Type(t)) => Some(syn::parse_quote!(#t)),
        Some(_) => return None,
    };
    rest.next()
        .is_none()
        .then_some((elem, rows_per_thread, index))
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

/// `Name<T>` or `Name<T, M>` (with or without a lifetime) as the last path
/// segment: returns `T` and `M`.
fn generic_pair(ty: &Type, name: &str) -> Option<(Type, Option<Type>)> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    let mut rest = args
        .args
        .iter()
        .filter(|a| !matches!(a, GenericArgument::Lifetime(_)));
    let elem = match rest.next()? {
        GenericArgument::Type(t) => t.clone(),
        _ => return None,
    };
    let map = match rest.next() {
        None => None,
        Some(GenericArgument::Type(t)) => Some(t.clone()),
        Some(_) => return None,
    };
    rest.next().is_none().then_some((elem, map))
}

/// `Name<T>` (or `Name<'a, T>`) as the last path segment: returns `T`.
/// The first type argument of `ty` when its last segment is `name`.
fn first_type_argument(ty: &Type, name: &str) -> Option<Type> {
    let Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if last.ident != name {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    args.args.iter().find_map(|a| match a {
        GenericArgument::Type(t) => Some(t.clone()),
        _ => None,
    })
}

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
            "unsupported kernel parameter type `{}`: {why}; {}",
            type_name(ty),
            super::kinds::supported()
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
