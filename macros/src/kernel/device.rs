//! Device side: the body as a private function per instance (type-checked on
//! the host too), and two `ptx-kernel` entry points per instance that rebuild
//! slices from the pointers and lengths the launcher passed.
//!
//! A generic kernel's body is copied once per instance with the generic
//! parameter substituted (see [`super::substitute`]), so nothing in a body is
//! generic at code generation: a `shared_array!` of `T` becomes a `static` of
//! the instance's type.
//!
//! The entry points differ in the witnesses: the `__1d` one, which the
//! runtime launches only when the grid and the block are one-dimensional,
//! takes `thread_index()` as `grid_1d()` without testing the shape; the
//! `__2d` one (made only for kernels that call `thread_index_2d`), launched
//! for the other launches whose z extents are 1, takes `thread_index_2d()`
//! as `grid_2d()` without testing; the general one, launched for every other
//! shape, tests (and fails in `thread_index()`: a 1-D witness is not unique
//! there). The body is generic over which one it is, takes the entry point's
//! shape token (`EntryShape`, made only by the entry point, `unsafe`) as a
//! hidden first parameter, and binds the names `thread_index`,
//! `thread_index_2d` and `thread_index_3d` at its top to closures over the
//! token, shadowing the imported functions (see `gpu_device::entry`).
//! Without the token, the unchecked witnesses, or the body's instance for
//! another entry, could be called from safe code in a launch of another shape.
//!
//! Slices reach the body through a local `LaunchScope` of the entry point,
//! which they borrow: a body cannot ask for `'static` slices and keep them
//! past the launch.
//!
//! Two more facts reach the compiled code through the entry points:
//! - a declared block shape (`#[kernel(block = (x, y, z))]`), which each
//!   entry tells the compiler before the body runs (the launcher refuses
//!   every other shape);
//! - which parameters are inputs (`&[T]`): a marker static per entry point
//!   names them, and `gpu-builder` marks those pointer parameters `noalias
//!   readonly`, so their loads become `ld.global.nc` (see
//!   `gpu_builder::kernel_inputs` for the argument).

use super::attribute::KernelPaths;
use super::model::{Instance, Kernel};
use super::params::{MatrixIndex, ParamKind};
use super::substitute::substitute;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
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
    let entries = kernel.instances.iter().flat_map(|i| {
        entry_shapes(kernel)
            .into_iter()
            .map(move |shape| entry(kernel, i, shape))
    });
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
        Some(_) => mentions(kernel.function.block.to_token_stream(), "shared_array"),
    }
}

/// Which launches an entry point serves (`gpu_device::entry`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EntryShape {
    /// Every launch no other entry serves.
    General,
    /// Grids and blocks `(n, 1, 1)`: the `__1d` entry.
    OneDimensional,
    /// Other grids and blocks whose z extent is 1: the `__2d` entry.
    ZExtentOne,
}

impl EntryShape {
    /// The `gpu_device::entry` constant naming this shape; `device` is the
    /// path of `gpu_device` where it is written.
    fn constant(self, device: &syn::Path) -> TokenStream {
        match self {
            EntryShape::General => quote!(#device::__private::GENERAL),
            EntryShape::OneDimensional => quote!(#device::__private::ONE_DIMENSIONAL),
            EntryShape::ZExtentOne => quote!(#device::__private::Z_EXTENT_ONE),
        }
    }

    /// The PTX name of an instance's entry point of this shape.
    pub fn entry_name(self, entry: &str) -> String {
        match self {
            EntryShape::General => entry.to_string(),
            EntryShape::OneDimensional => format!("{entry}__1d"),
            EntryShape::ZExtentOne => format!("{entry}__2d"),
        }
    }
}

/// The entry points each instance gets: a `__2d` one only when the body
/// calls `thread_index_2d` (the only witness it changes); in other kernels
/// the general entry serves those launches as well.
pub fn entry_shapes(kernel: &Kernel) -> Vec<EntryShape> {
    let mut shapes = vec![EntryShape::General, EntryShape::OneDimensional];
    if mentions(kernel.function.block.to_token_stream(), "thread_index_2d") {
        shapes.push(EntryShape::ZExtentOne);
    }
    shapes
}

/// Whether `tokens` contain the identifier `name`, at any depth.
pub fn mentions(tokens: TokenStream, name: &str) -> bool {
    tokens.into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == name,
        proc_macro2::TokenTree::Group(g) => mentions(g.stream(), name),
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
        .push(syn::parse_quote!(const __GPU_ENTRY: u8));
    // The entry point's proof of the launch's shape: the body cannot be
    // called without it, and user code cannot name it (mixed-site hygiene).
    let shape = shape_token();
    let device = &kernel.paths.device;
    function.sig.inputs.insert(
        0,
        syn::parse_quote!(#shape: #device::__private::EntryShape<__GPU_ENTRY>),
    );
    let user_block = &function.block;
    function.block = syn::parse_quote!({
        // Calls of the witnesses in the body resolve to these bindings: the
        // entry shape's versions (see the module documentation).
        #[allow(unused_variables)]
        let thread_index = move || #shape.thread_index();
        #[allow(unused_variables)]
        let thread_index_2d = move || #shape.thread_index_2d();
        #[allow(unused_variables)]
        let thread_index_3d = move || #shape.thread_index_3d();
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

/// The name of the body's first parameter, the entry shape token: hygienic,
/// so the kernel's own code cannot name it.
fn shape_token() -> Ident {
    Ident::new("__gpu_entry_shape", proc_macro2::Span::mixed_site())
}

/// The body function of an instance.
pub fn body_name(kernel: &Kernel, instance: &Instance) -> Ident {
    if instance.suffix.is_empty() || !copies_per_instance(kernel) {
        format_ident!("__gpu_kernel_body_{}", kernel.name)
    } else {
        format_ident!("__gpu_kernel_body_{}_{}", kernel.name, instance.suffix)
    }
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
    /// The positions in `params` of the inputs' (`&[T]`) pointers.
    pub inputs: Vec<usize>,
}

/// `block_shape` is the instance's declared block shape as an expression
/// (see [`block_shape`]), `None` when it declares none; `paths` are the
/// kernel's paths as seen where the entry point is emitted.
pub fn entry_parts(
    kernel: &Kernel,
    instance: &Instance,
    shape: EntryShape,
    block_shape: Option<&TokenStream>,
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
    // The slices handed to the body borrow this local: their lifetimes end
    // with the entry point's call, so a body that asks for `'static` ones
    // (to keep them past the launch) does not compile.
    let scope = Ident::new("__gpu_launch", proc_macro2::Span::mixed_site());
    let mut rebuild = vec![quote! {
        let #scope = #device::__private::LaunchScope::new();
    }];
    let mut call_args = Vec::new();
    let mut inputs = Vec::new();
    if let Some(shape) = block_shape {
        rebuild.push(quote! {
            // SAFETY: this kernel's launcher refuses every block shape but the
            // declared one (`KernelFunction::launch`), and is the only safe way
            // to launch this entry point.
            unsafe { #device::__private::assume_block_shape(#shape) };
        });
    }
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
                let ty = substitute_type(ty);
                // rustc's PTX kernel ABI passes values aligned to at most 16
                // bytes (a larger alignment crashes the compiler): refused
                // first, while constants are evaluated.
                rebuild.push(quote_spanned! {ty.span()=>
                    const _: () = #device::__private::require_parameter_align::<#ty>();
                });
                params.push((name.clone(), ty));
            }
            ParamKind::Input(elem) => {
                let elem = substitute_type(elem);
                inputs.push(params.len());
                params.push((ptr.clone(), syn::parse_quote!(*const #elem)));
                params.push((len.clone(), syn::parse_quote!(usize)));
                rebuild.push(quote! {
                    // SAFETY: the launcher passed a live device allocation of `len`
                    // elements that no argument of this launch writes.
                    let #name: &[#elem] = #scope.input(unsafe { #device::__private::slice_from_kernel_param(#ptr, #len) });
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
                    let #name = #scope.output(unsafe { #device::DisjointSlice::<#elem>::from_raw_parts(#ptr, #len) });
                });
            }
            ParamKind::Output2d(elem, rows_per_thread, index) => {
                let elem = substitute_type(elem);
                let r = match rows_per_thread {
                    Some(e) => substitute_expr(e),
                    None => quote!(1),
                };
                // The `U32` form's extents are `u32`: its launcher checked
                // that the element count fits.
                let (extent, matrix, scoped): (Type, _, _) = match index {
                    MatrixIndex::Usize => (
                        syn::parse_quote!(usize),
                        quote!(#device::DisjointSlice2d),
                        format_ident!("output_2d"),
                    ),
                    MatrixIndex::U32 => (
                        syn::parse_quote!(u32),
                        quote!(#device::DisjointSlice2dU32),
                        format_ident!("output_2d_u32"),
                    ),
                };
                let (rows_name, cols_name) = (
                    format_ident!("{}__rows", name),
                    format_ident!("{}__cols", name),
                );
                params.push((ptr.clone(), syn::parse_quote!(*mut #elem)));
                params.push((len.clone(), extent.clone()));
                params.push((rows_name.clone(), extent.clone()));
                params.push((cols_name.clone(), extent));
                rebuild.push(quote! {
                    // SAFETY: the launcher passed a live device allocation of
                    // `len == rows * cols` elements (a 2-D view holds exactly
                    // that product, which it checked; for the `U32` form, it
                    // also checked that the product fits in a `u32`), borrowed
                    // mutably for this launch alone; every thread receives the
                    // same.
                    let #name = #scope.#scoped(unsafe { #matrix::<#elem, { #r }>::from_kernel_param(#ptr, #len, #rows_name, #cols_name) });
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
                    let #name = #scope.output_3d(unsafe { #device::DisjointSlice3d::<#elem>::from_raw_parts(#ptr, #d, #r, #c) });
                });
            }
            ParamKind::Atomic(elem) => {
                let elem = substitute_type(elem);
                params.push((ptr.clone(), syn::parse_quote!(*const #elem)));
                params.push((len.clone(), syn::parse_quote!(usize)));
                rebuild.push(quote! {
                    // SAFETY: as for outputs; `DeviceAtomic<T>` is `repr(transparent)`
                    // over `T` and accessed only with atomic instructions.
                    let #name: &[#device::DeviceAtomic<#elem>] = #scope.input(unsafe {
                        #device::__private::slice_from_kernel_param(#ptr.cast::<#device::DeviceAtomic<#elem>>(), #len)
                    });
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
    for bound in &kernel.lengths {
        let (input, covered) = (&bound.input, &bound.covered);
        let have = format_ident!("{}__len", input);
        let need = format_ident!("{}__len", covered);
        let (input_str, covered_str) = (input.to_string(), covered.to_string());
        rebuild.push(quote! {
            // SAFETY: this kernel's launcher refuses arguments where `input`
            // has fewer elements than `covered` (its `len` option,
            // `check_len_at_least`), and is the only safe way to launch this
            // entry point.
            unsafe { #device::__private::assume_len_at_least(#have, #need as usize, #input_str, #covered_str) };
        });
    }
    let entry_constant = shape.constant(device);
    // SAFETY (of the block below): this is the entry point of the shape it
    // names: the runtime launches the one-dimensional entry only for grids
    // and blocks of the form (n, 1, 1), the z-extent-one entry only for
    // grids and blocks whose z extent is 1 and that have at most 2^32
    // threads along x and y (`KernelFunction::entry_for`).
    let shape = quote! {
        unsafe { #device::__private::EntryShape::<{ #entry_constant }>::new() }
    };
    EntryParts {
        params,
        rebuild,
        call: match (&instance.arg, copies_per_instance(kernel)) {
            (Some(arg), false) => {
                quote!(#body_name::<#arg, { #entry_constant }>(#shape, #(#call_args),*))
            }
            _ => quote!(#body_name::<{ #entry_constant }>(#shape, #(#call_args),*)),
        },
        inputs,
    }
}

/// The instance's declared block shape as a `[u32; 3]` constant expression
/// (checked when compiled), or `None` when the kernel declares none.
/// `device` is the path of `gpu_device` where the expression is written.
pub fn block_shape(
    kernel: &Kernel,
    instance: &Instance,
    device: &syn::Path,
) -> Option<TokenStream> {
    let [x, y, z] =
        kernel
            .block
            .as_ref()?
            .clone()
            .map(|e| match (&kernel.generic, &instance.arg) {
                (Some(generic), Some(arg)) => substitute(e.to_token_stream(), &generic.name, arg),
                _ => e.to_token_stream(),
            });
    Some(quote! {{
        const SHAPE: [u32; 3] = #device::__private::declared_block_shape(#x, #y, #z);
        SHAPE
    }})
}

/// The name of the marker static that tells `gpu-builder` which parameters
/// of entry point `entry` are inputs: `__gpu_inputs.<entry>.<parameter
/// count>.<position>...`.
pub fn inputs_marker(entry: &str, param_count: usize, inputs: &[usize]) -> String {
    let mut name = format!("__gpu_inputs.{entry}.{param_count}");
    for i in inputs {
        name.push_str(&format!(".{i}"));
    }
    name
}

fn entry(kernel: &Kernel, instance: &Instance, shape: EntryShape) -> TokenStream {
    let name = shape.entry_name(&instance.entry);
    let entry = Ident::new(&name, kernel.span());
    let EntryParts {
        params,
        rebuild,
        call,
        inputs,
    } = entry_parts(
        kernel,
        instance,
        shape,
        block_shape(kernel, instance, &kernel.paths.device).as_ref(),
        &kernel.paths,
    );
    // A `u8` whose symbol name carries the facts; nothing reads its value,
    // and the build drops it with the other unused globals.
    let marker = (!inputs.is_empty()).then(|| {
        let symbol = inputs_marker(&name, params.len(), &inputs);
        quote! {
            #[cfg(target_arch = "nvptx64")]
            const _: () = {
                #[unsafe(export_name = #symbol)]
                static INPUTS: u8 = 0;
            };
        }
    });
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
        #marker
    }
}
