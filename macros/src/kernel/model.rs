//! The model of a kernel: its name, its instances, its parameters (see
//! [`super::params`]) and the paths the generated code uses. Parsing checks
//! everything it can and reports every problem at once; a kernel with
//! problems is described by a [`Failure`], from which the fallback items are
//! emitted.

use super::attribute::{self, KernelPaths, LengthBound};
use super::kinds::{LengthRole, ALL};
use super::params::{type_name, Param, ParamKind};
use crate::errors::Errors;
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Attribute, GenericParam, Ident, ItemFn, ReturnType, Type, TypePath, Visibility};

/// A parsed `#[kernel]` function.
pub struct Kernel {
    /// The function as written; its body becomes the device-side body.
    pub function: ItemFn,
    /// Doc comments and other outer attributes, copied onto the launcher module.
    pub docs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    /// The single generic parameter of a generic kernel (a type or a const).
    pub generic: Option<Generic>,
    /// One entry point per instance: the whole kernel for a non-generic kernel.
    pub instances: Vec<Instance>,
    pub params: Vec<Param>,
    /// Where the generated code finds `gpu_device`, `gpu_runtime` and the
    /// embedded module, as seen from the kernel's own module.
    pub paths: KernelPaths,
    /// `block = (x, y, z)`: the only block shape the kernel runs in (missing
    /// extents are 1); `usize` expressions, which may name a const parameter.
    pub block: Option<[syn::Expr; 3]>,
    /// `len(input >= covered)` options, checked: `input` is an `&[T]`
    /// parameter, `covered` one with an element count.
    pub lengths: Vec<LengthBound>,
    /// `launch_bounds = (max_threads, min_blocks)`: `usize` expressions,
    /// which may name a const parameter (`min_blocks` 0 when not given).
    pub launch_bounds: Option<[syn::Expr; 2]>,
    /// `cooperative`: launched cooperatively (every block resident at
    /// once); only such a kernel takes a `Grid`.
    pub cooperative: bool,
    /// `cluster = (x, y, z)`: the thread-block cluster shape of every
    /// launch (missing extents 1); `usize` expressions, which may name a
    /// const parameter. Only such a kernel takes a `Cluster`.
    pub cluster: Option<[syn::Expr; 3]>,
    /// `arch = "sm_80"`: the architecture the kernel needs; its device code
    /// is compiled only into PTX of that architecture or a later one.
    pub arch: Option<String>,
}

/// A generic kernel's parameter.
pub struct Generic {
    pub name: Ident,
    /// `const N: usize`: its type; `None` for a type parameter.
    pub const_type: Option<Type>,
}

/// One monomorphised entry point.
pub struct Instance {
    /// What is substituted for the generic parameter (`None` for a
    /// non-generic kernel): a type, or a const value.
    pub arg: Option<TokenStream>,
    /// The PTX entry point name.
    pub entry: String,
    /// The suffix of the entry name (the type or value), for body names.
    pub suffix: String,
}

/// A kernel that could not be modelled: every error found, and what was
/// understood of it, for the fallback items that keep the function and its
/// launcher's name known to the rest of the crate.
pub struct Failure {
    pub errors: syn::Error,
    /// `None` when the item is not a function at all.
    pub partial: Option<Box<Partial>>,
}

/// What is known of a kernel with errors.
pub struct Partial {
    pub function: ItemFn,
    /// The paths whose override was well formed (the default for the others).
    pub paths: KernelPaths,
    /// One entry per parameter of the function: `None` where it has errors.
    pub params: Vec<Option<Param>>,
}

impl Kernel {
    /// The kernel, or every error found in the attribute's arguments `args`
    /// and the function `item`.
    pub fn parse(args: TokenStream, item: TokenStream) -> Result<Kernel, Failure> {
        let function: ItemFn = match syn::parse2(item) {
            Ok(f) => f,
            Err(e) => {
                let errors =
                    syn::Error::new(e.span(), format!("#[kernel] applies to a function: {e}"));
                return Err(Failure {
                    errors,
                    partial: None,
                });
            }
        };
        let mut errors = Errors::default();
        check_signature(&function, &mut errors);
        let generic = generic_parameter(&function, &mut errors);
        let const_instances = generic.as_ref().is_some_and(|g| g.const_type.is_some());
        let attribute = attribute::parse(args, const_instances, &mut errors);
        let name = function.sig.ident.clone();
        let instances = instances(
            &name,
            generic.as_ref(),
            attribute.instances,
            &function,
            &mut errors,
        );
        let params: Vec<Option<Param>> = function
            .sig
            .inputs
            .iter()
            .map(|arg| errors.ok(Param::parse(arg)))
            .collect();
        check_device_built(
            params.iter().flatten(),
            attribute.cooperative.is_some(),
            attribute.cluster.is_some(),
            &mut errors,
        );
        check_cluster(
            attribute.cluster.as_ref().map(|(key, _)| key),
            attribute.arch.as_deref(),
            attribute.cooperative.as_ref(),
            &mut errors,
        );
        check_lengths(&attribute.lengths, &params, &mut errors);
        if let Err(errors) = errors.finish() {
            return Err(Failure {
                errors,
                partial: Some(Box::new(Partial {
                    function,
                    paths: attribute.paths,
                    params,
                })),
            });
        }
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
            generic,
            instances,
            params: params.into_iter().flatten().collect(),
            paths: attribute.paths,
            block: attribute.block,
            lengths: attribute.lengths,
            launch_bounds: attribute.launch_bounds,
            cooperative: attribute.cooperative.is_some(),
            cluster: attribute.cluster.map(|(_, extents)| extents),
            arch: attribute.arch,
            function,
        })
    }

    /// `k::Kernel`, the type whose associated items are the generated
    /// body, descriptions and host entries, as named at the kernel's scope.
    pub fn scope_type(&self) -> TokenStream {
        let name = &self.name;
        quote::quote!(#name::Kernel)
    }
}

fn check_signature(function: &ItemFn, errors: &mut Errors) {
    let sig = &function.sig;
    let mut reject = |tokens: &dyn ToTokens, what: &str| {
        errors.push(syn::Error::new_spanned(
            tokens.to_token_stream(),
            format!("a #[kernel] cannot be {what}"),
        ))
    };
    if let Some(t) = &sig.constness {
        reject(t, "`const`");
    }
    if let Some(t) = &sig.asyncness {
        reject(t, "`async`");
    }
    if let Some(t) = &sig.unsafety {
        reject(
            t,
            "`unsafe`: its launcher must be safe to call; use `unsafe` blocks inside the body",
        );
    }
    if let Some(t) = &sig.abi {
        reject(t, "`extern`: #[kernel] chooses the ABI");
    }
    if let Some(t) = &sig.variadic {
        reject(t, "variadic");
    }
    if let ReturnType::Type(_, ty) = &sig.output {
        errors.push(syn::Error::new_spanned(
            ty,
            "a #[kernel] returns nothing: write results into a `DisjointSlice<T>` parameter",
        ));
    }
}

/// The kernel's generic parameter (the first, if there are more: each
/// further one is an error).
fn generic_parameter(function: &ItemFn, errors: &mut Errors) -> Option<Generic> {
    let mut found: Option<Generic> = None;
    for param in &function.sig.generics.params {
        let generic = match param {
            GenericParam::Lifetime(_) => continue,
            GenericParam::Const(c) => Generic {
                name: c.ident.clone(),
                const_type: Some(c.ty.clone()),
            },
            GenericParam::Type(t) => Generic {
                name: t.ident.clone(),
                const_type: None,
            },
        };
        if found.is_some() {
            errors.push(syn::Error::new_spanned(
                param,
                "a #[kernel] may have at most one generic parameter (a type or a const)",
            ));
        } else {
            found = Some(generic);
        }
    }
    found
}

fn instances(
    name: &Ident,
    generic: Option<&Generic>,
    args: Vec<TokenStream>,
    function: &ItemFn,
    errors: &mut Errors,
) -> Vec<Instance> {
    match (generic, args.is_empty()) {
        (None, true) => vec![Instance {
            arg: None,
            entry: name.to_string(),
            suffix: String::new(),
        }],
        (None, false) => {
            errors.push(syn::Error::new_spanned(
                &args[0],
                format!("`{name}` is not generic: write `#[kernel]` without a type list"),
            ));
            Vec::new()
        }
        (Some(g), true) => {
            let example = if g.const_type.is_some() {
                "`#[kernel(16, 32)]`"
            } else {
                "`#[kernel(f32, f64)]`"
            };
            errors.push(syn::Error::new_spanned(
                &function.sig.generics,
                format!(
                    "generic kernel `{name}` must list the {} to compile it for, e.g. {example}: each becomes a PTX entry point `{name}_<{}>` (`{}` is chosen at the launch)",
                    if g.const_type.is_some() { "values" } else { "types" },
                    if g.const_type.is_some() { "value" } else { "type" },
                    g.name
                ),
            ));
            Vec::new()
        }
        (Some(g), false) => {
            let mut out: Vec<Instance> = Vec::new();
            for arg in args {
                let suffix = if g.const_type.is_some() {
                    value_suffix(&arg)
                } else {
                    syn::parse2(arg.clone()).and_then(|ty| type_suffix(&ty))
                };
                let Some(suffix) = errors.ok(suffix) else {
                    continue;
                };
                let entry = format!("{name}_{suffix}");
                if out.iter().any(|i| i.entry == entry) {
                    errors.push(syn::Error::new_spanned(
                        &arg,
                        format!("`{entry}` is listed twice"),
                    ));
                    continue;
                }
                out.push(Instance {
                    arg: Some(arg),
                    entry,
                    suffix,
                });
            }
            out
        }
    }
}

/// Each `len(input >= covered)`: `input` names an `&[T]` parameter and
/// `covered` one with an element count (see [`LengthRole`]); an error
/// spanned on the name otherwise.
fn check_lengths(lengths: &[LengthBound], params: &[Option<Param>], errors: &mut Errors) {
    let find = |name: &Ident| params.iter().flatten().find(|p| p.name == *name);
    let named = |role: fn(LengthRole) -> bool| {
        ALL.iter()
            .filter(|k| role(k.length_bound))
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for bound in lengths {
        match find(&bound.input).map(|p| p.kind.spec().length_bound) {
            Some(LengthRole::InputOrCovered) => {}
            Some(LengthRole::None | LengthRole::Covered) => errors.push(syn::Error::new_spanned(
                &bound.input,
                format!(
                    "`len({} >= ...)`: `{}` must be an input slice: {}",
                    bound.input,
                    bound.input,
                    named(|r| r == LengthRole::InputOrCovered)
                ),
            )),
            None => errors.push(no_parameter(&bound.input)),
        }
        match find(&bound.covered).map(|p| p.kind.spec().length_bound) {
            Some(LengthRole::InputOrCovered | LengthRole::Covered) => {}
            Some(LengthRole::None) => errors.push(syn::Error::new_spanned(
                &bound.covered,
                format!(
                    "`len(... >= {})`: `{}` must be a parameter with an element count: {}",
                    bound.covered,
                    bound.covered,
                    named(|r| r != LengthRole::None)
                ),
            )),
            None => errors.push(no_parameter(&bound.covered)),
        }
    }
}

fn no_parameter(name: &Ident) -> syn::Error {
    syn::Error::new_spanned(name, format!("`len`: the kernel has no parameter `{name}`"))
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

/// At most one phase token, one dynamic shared array and one grid token
/// per kernel (each extra one is an error at its type); a grid token only
/// in a `cooperative` kernel (grid sync needs every block resident).
fn check_device_built<'a>(
    params: impl Iterator<Item = &'a Param>,
    cooperative: bool,
    cluster: bool,
    errors: &mut Errors,
) {
    let mut seen_cluster = false;
    let mut seen_block = false;
    let mut seen_dynamic = false;
    let mut seen_grid = false;
    for p in params {
        match &p.kind {
            ParamKind::Grid if !cooperative => errors.push(syn::Error::new_spanned(
                &p.ty,
                "grid sync needs a cooperative launch (every block of the grid resident at once): declare the kernel `#[kernel(cooperative)]` to take a `Grid`",
            )),
            ParamKind::Grid if seen_grid => errors.push(syn::Error::new_spanned(
                &p.ty,
                "a #[kernel] takes at most one `Grid`: each thread has one grid token",
            )),
            ParamKind::Grid => seen_grid = true,
            ParamKind::Cluster if !cluster => errors.push(syn::Error::new_spanned(
                &p.ty,
                "a `Cluster` needs a cluster launch: declare the kernel's cluster shape, `#[kernel(arch = \"sm_90\", cluster = (2, 1, 1))]`, to take one",
            )),
            ParamKind::Cluster if seen_cluster => errors.push(syn::Error::new_spanned(
                &p.ty,
                "a #[kernel] takes at most one `Cluster`: each thread has one cluster witness",
            )),
            ParamKind::Cluster => seen_cluster = true,
            ParamKind::Block if seen_block => errors.push(syn::Error::new_spanned(
                &p.ty,
                "a #[kernel] takes at most one `Block`: each thread has one phase token",
            )),
            ParamKind::Block => seen_block = true,
            ParamKind::DynamicShared(_) if seen_dynamic => errors.push(syn::Error::new_spanned(
                &p.ty,
                "a #[kernel] takes at most one `DynamicShared<T>`: two would view the same bytes as two types",
            )),
            ParamKind::DynamicShared(_) => seen_dynamic = true,
            ParamKind::Scalar(_)
            | ParamKind::Value(_)
            | ParamKind::Input(_)
            | ParamKind::Output(..)
            | ParamKind::MappedMatrix(..)
            | ParamKind::Output2d(..)
            | ParamKind::Output3d(_)
            | ParamKind::Atomic(_)
            | ParamKind::TensorMap(..)
            | ParamKind::TensorMapOut(..) => {}
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
            format!(
                "kernel instances must be named types such as `f32` or `Pixel`, not `{}`",
                type_name(ty)
            ),
        )),
    }
}

/// A `cluster` kernel needs `arch = "sm_90"` or later (clusters are
/// Hopper's), and is not also `cooperative` (not supported: a cooperative
/// cluster launch would need both attributes at once).
fn check_cluster(
    cluster: Option<&Ident>,
    arch: Option<&str>,
    cooperative: Option<&Ident>,
    errors: &mut Errors,
) {
    let Some(key) = cluster else {
        return;
    };
    let hopper = attribute::ARCHS
        .iter()
        .position(|a| *a == "sm_90")
        .expect("sm_90 is listed");
    let reaches = arch.is_some_and(|arch| {
        attribute::ARCHS
            .iter()
            .position(|a| *a == arch)
            .is_some_and(|at| at >= hopper)
    });
    if !reaches {
        let declared = match arch {
            Some(arch) => format!("it declares `arch = \"{arch}\"`"),
            None => "it declares no `arch`".to_string(),
        };
        errors.push(syn::Error::new(
            key.span(),
            format!("thread-block clusters need sm_90 or later, and {declared}: add `arch = \"sm_90\"` (or a later architecture) to the kernel's attribute"),
        ));
    }
    if let Some(cooperative) = cooperative {
        errors.push(syn::Error::new(
            cooperative.span(),
            "a kernel cannot be both `cooperative` and `cluster` here: grid sync in cluster launches is not supported; keep one",
        ));
    }
}
