//! Device side: the body as a private function per instance (type-checked on
//! the host too), and two `ptx-kernel` entry points per instance that rebuild
//! slices from the pointers and lengths the launcher passed.
//!
//! A generic kernel's body is copied once per instance with the generic
//! parameter substituted (see [`super::substitute`]), so nothing in a body is
//! generic at code generation: a `shared_array!` of `T` becomes a `static` of
//! the instance's type.
//!
//! The two entry points differ in the witnesses: the `__1d` one, which the
//! runtime launches only when the grid and the block are one-dimensional,
//! takes `thread_index()` as `grid_1d()` without testing the shape; the
//! general one, launched for every other shape, fails in `thread_index()` (a
//! 1-D witness is not unique there). The body is generic over which one it
//! is, and binds the names `thread_index`, `thread_index_2d` and
//! `thread_index_3d` to the matching functions at its top, shadowing the
//! imported ones.

use super::attribute::KernelPaths;
use super::model::{Instance, Kernel};
use super::params::ParamKind;
use super::substitute::substitute;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::{GenericParam, Ident, Type};

pub fn emit(kernel: &Kernel) -> TokenStream {
    let bodies: Vec<TokenStream> = if copies_per_instance(kernel) {
        kernel
            .instances
            .iter()
            .map(|i| body(kernel, Some(i)))
            .collect()
    } else {
        vec![body(kernel, None)]
    };
    let entries = kernel
        .instances
        .iter()
        .flat_map(|i| [entry(kernel, i, false), entry(kernel, i, true)]);
    quote! {
        #(#bodies)*
        #(#entries)*
    }
}

/// Whether the body is copied per instance with the generic parameter
/// substituted: for const parameters, and for type parameters when the body
/// has a `shared_array!` (a `static`, which cannot depend on a generic
/// parameter). Otherwise one generic body serves every instance, so that
/// `T::Assoc` paths keep resolving through `T`'s bounds (after
/// substitution, a concrete type needs `<f32 as Trait>::Assoc`).
pub fn copies_per_instance(kernel: &Kernel) -> bool {
    match &kernel.generic {
        None => false,
        Some(g) if g.const_type.is_some() => true,
        Some(_) => mentions_shared_array(kernel.function.block.to_token_stream()),
    }
}

/// Whether `tokens` invoke `shared_array!` (whose `static` cannot depend
/// on a generic parameter).
pub fn mentions_shared_array(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == "shared_array",
        proc_macro2::TokenTree::Group(g) => mentions_shared_array(g.stream()),
        _ => false,
    })
}

/// The body of one instance (or, with `None`, the generic body of all): the
/// function as written, renamed, with the generic parameter substituted and
/// the witnesses bound for the entry shape.
fn body(kernel: &Kernel, instance: Option<&Instance>) -> TokenStream {
    let mut function = kernel.function.clone();
    function.sig.ident = match instance {
        Some(i) => body_name(kernel, i),
        None => format_ident!("__gpu_kernel_body_{}", kernel.name),
    };
    function.vis = syn::Visibility::Inherited;
    function.attrs.retain(|a| !a.path().is_ident("doc"));
    if let (Some(generic), Some(arg)) = (&kernel.generic, instance.and_then(|i| i.arg.as_ref())) {
        // The parameter's bounds hold for the instance: keep them as a where clause.
        let bounds: Vec<TokenStream> = function
            .sig
            .generics
            .type_params()
            .filter(|p| p.ident == generic.name && !p.bounds.is_empty())
            .map(|p| {
                let b = &p.bounds;
                quote!(#arg: #b)
            })
            .collect();
        function.sig.generics.params = function
            .sig
            .generics
            .params
            .iter()
            .filter(|p| !matches!(p, GenericParam::Type(t) if t.ident == generic.name))
            .filter(|p| !matches!(p, GenericParam::Const(c) if c.ident == generic.name))
            .cloned()
            .collect();
        if !bounds.is_empty() {
            let clause = function.sig.generics.make_where_clause();
            for b in bounds {
                clause.predicates.push(syn::parse_quote!(#b));
            }
        }
        let tokens = substitute(function.to_token_stream(), &generic.name, arg);
        function = match syn::parse2(tokens) {
            Ok(f) => f,
            Err(e) => return e.into_compile_error(),
        };
    }
    function
        .sig
        .generics
        .params
        .push(syn::parse_quote!(const __GPU_ONE_DIMENSIONAL: bool));
    let user_block = &function.block;
    let device = &kernel.paths.device;
    function.block = syn::parse_quote!({
        // Calls of the witnesses in the body resolve to these bindings: the
        // entry shape's versions (see the module documentation).
        #[allow(unused_variables)]
        let thread_index = #device::__private::EntryShape::<__GPU_ONE_DIMENSIONAL>::thread_index;
        #[allow(unused_variables)]
        let thread_index_2d = #device::__private::EntryShape::<__GPU_ONE_DIMENSIONAL>::thread_index_2d;
        #[allow(unused_variables)]
        let thread_index_3d = #device::__private::EntryShape::<__GPU_ONE_DIMENSIONAL>::thread_index_3d;
        #user_block
    });
    quote! {
        // The body is compiled on the host too: the simulator runs it.
        #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
        #[inline(always)]
        #[allow(clippy::too_many_arguments, non_snake_case)]
        #function
    }
}

/// The body function of an instance.
pub fn body_name(kernel: &Kernel, instance: &Instance) -> Ident {
    if instance.suffix.is_empty() || !copies_per_instance(kernel) {
        format_ident!("__gpu_kernel_body_{}", kernel.name)
    } else {
        format_ident!("__gpu_kernel_body_{}_{}", kernel.name, instance.suffix)
    }
}

/// The PTX name of an instance's entry point for one-dimensional launches.
pub fn one_dimensional_entry(entry: &str) -> String {
    format!("{entry}__1d")
}

/// How an instance's entry point receives its arguments and rebuilds the
/// body's parameters from them; shared by the PTX entry point and the host
/// entry point of the CPU simulator.
pub struct EntryParts {
    /// The entry point's parameters, one per PTX parameter, in order.
    pub params: Vec<(Ident, Type)>,
    /// Statements turning them into the body's parameters.
    pub rebuild: Vec<TokenStream>,
    /// The call of the body.
    pub call: TokenStream,
}

/// `paths` are the kernel's paths as seen where the entry point is emitted.
pub fn entry_parts(
    kernel: &Kernel,
    instance: &Instance,
    one_dimensional: bool,
    paths: &KernelPaths,
) -> EntryParts {
    let device = &paths.device;
    let body_name = body_name(kernel, instance);
    let substitute_type = |ty: &Type| -> Type {
        match (&kernel.generic, &instance.arg) {
            (Some(generic), Some(arg)) => {
                syn::parse2(substitute(ty.to_token_stream(), &generic.name, arg))
                    .expect("a substituted type is a type")
            }
            _ => ty.clone(),
        }
    };
    let substitute_expr = |e: &syn::Expr| -> TokenStream {
        match (&kernel.generic, &instance.arg) {
            (Some(generic), Some(arg)) => substitute(e.to_token_stream(), &generic.name, arg),
            _ => e.to_token_stream(),
        }
    };
    let mut params: Vec<(Ident, Type)> = Vec::new();
    let mut rebuild = Vec::new();
    let mut call_args = Vec::new();
    for p in &kernel.params {
        let name = &p.name;
        let ptr = format_ident!("{}__ptr", name);
        let len = format_ident!("{}__len", name);
        let usize_param = |suffix: &str| {
            (
                format_ident!("{}__{}", name, suffix),
                syn::parse_quote!(usize),
            )
        };
        match &p.kind {
            ParamKind::Scalar(ty) | ParamKind::Value(ty) => {
                params.push((name.clone(), substitute_type(ty)));
            }
            ParamKind::Input(elem) => {
                let elem = substitute_type(elem);
                params.push((ptr.clone(), syn::parse_quote!(*const #elem)));
                params.push((len.clone(), syn::parse_quote!(usize)));
                rebuild.push(quote! {
                    // SAFETY: the launcher passed a live device allocation of `len`
                    // elements that no argument of this launch writes.
                    let #name: &[#elem] = unsafe { #device::__private::slice_from_kernel_param(#ptr, #len) };
                });
            }
            ParamKind::Output(elem) => {
                let elem = substitute_type(elem);
                params.push((ptr.clone(), syn::parse_quote!(*mut #elem)));
                params.push((len.clone(), syn::parse_quote!(usize)));
                rebuild.push(quote! {
                    // SAFETY: the launcher passed a live device allocation of `len`
                    // elements, borrowed mutably for this launch alone; every thread
                    // receives the same one.
                    let #name = unsafe { #device::DisjointSlice::<#elem>::from_raw_parts(#ptr, #len) };
                });
            }
            ParamKind::Output2d(elem, rows_per_thread) => {
                let elem = substitute_type(elem);
                let r = match rows_per_thread {
                    Some(e) => substitute_expr(e),
                    None => quote!(1),
                };
                let (rows, cols) = (usize_param("rows"), usize_param("cols"));
                let (rows_name, cols_name) = (rows.0.clone(), cols.0.clone());
                params.push((ptr.clone(), syn::parse_quote!(*mut #elem)));
                params.push(rows);
                params.push(cols);
                rebuild.push(quote! {
                    // SAFETY: the launcher passed a live device allocation of
                    // `rows * cols` elements (a product it checked), borrowed
                    // mutably for this launch alone; every thread receives the same.
                    let #name = unsafe { #device::DisjointSlice2d::<#elem, { #r }>::from_raw_parts(#ptr, #rows_name, #cols_name) };
                });
            }
            ParamKind::Output3d(elem) => {
                let elem = substitute_type(elem);
                let (depth, rows, cols) = (
                    usize_param("depth"),
                    usize_param("rows"),
                    usize_param("cols"),
                );
                let (d, r, c) = (depth.0.clone(), rows.0.clone(), cols.0.clone());
                params.push((ptr.clone(), syn::parse_quote!(*mut #elem)));
                params.push(depth);
                params.push(rows);
                params.push(cols);
                rebuild.push(quote! {
                    // SAFETY: as for a matrix, with `depth * rows * cols` elements.
                    let #name = unsafe { #device::DisjointSlice3d::<#elem>::from_raw_parts(#ptr, #d, #r, #c) };
                });
            }
            ParamKind::Atomic(elem) => {
                let elem = substitute_type(elem);
                params.push((ptr.clone(), syn::parse_quote!(*const #elem)));
                params.push((len.clone(), syn::parse_quote!(usize)));
                rebuild.push(quote! {
                    // SAFETY: as for outputs; `DeviceAtomic<T>` is `repr(transparent)`
                    // over `T` and accessed only with atomic instructions.
                    let #name: &[#device::DeviceAtomic<#elem>] = unsafe {
                        #device::__private::slice_from_kernel_param(#ptr.cast::<#device::DeviceAtomic<#elem>>(), #len)
                    };
                });
            }
            ParamKind::Block => {
                rebuild.push(quote! {
                    // SAFETY: the entry point makes each thread's one token,
                    // before the body runs (the model checked there is one
                    // `Block` parameter at most).
                    let #name = unsafe { #device::Block::for_kernel_entry() };
                });
            }
            ParamKind::DynamicShared(elem) => {
                let elem = substitute_type(elem);
                rebuild.push(quote! {
                    // SAFETY: the only `DynamicShared` of this kernel (the model
                    // checked), so every thread views the memory as `#elem`.
                    let #name = unsafe { #device::DynamicShared::<#elem>::for_kernel_entry() };
                });
            }
        }
        call_args.push(quote!(#name));
    }
    EntryParts {
        params,
        rebuild,
        call: match (&instance.arg, copies_per_instance(kernel)) {
            (Some(arg), false) => quote!(#body_name::<#arg, #one_dimensional>(#(#call_args),*)),
            _ => quote!(#body_name::<#one_dimensional>(#(#call_args),*)),
        },
    }
}

fn entry(kernel: &Kernel, instance: &Instance, one_dimensional: bool) -> TokenStream {
    let entry = if one_dimensional {
        Ident::new(&one_dimensional_entry(&instance.entry), kernel.span())
    } else {
        Ident::new(&instance.entry, kernel.span())
    };
    let EntryParts {
        params,
        rebuild,
        call,
    } = entry_parts(kernel, instance, one_dimensional, &kernel.paths);
    let params = params.iter().map(|(name, ty)| quote!(#name: #ty));
    let docs = &kernel.docs;
    quote! {
        #[cfg(target_arch = "nvptx64")]
        #(#docs)*
        #[unsafe(no_mangle)]
        #[allow(non_snake_case, clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn #entry(#(#params),*) {
            #(#rebuild)*
            #call
        }
    }
}
