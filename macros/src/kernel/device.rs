//! Device side: the body as an associated function of `k::Kernel` per
//! instance (type-checked on the host too, where the simulator runs it),
//! and two `ptx-kernel` entry points per instance that rebuild the body's
//! parameters from the PTX parameters the launcher passed.
//!
//! Everything is emitted at the kernel's scope, where the user's tokens
//! (types, the instance list, `block`) mean what they mean beside the
//! kernel: the body as an associated function (whose name is in no
//! scope), each entry point alone in an anonymous `const` under a fixed
//! Rust name, its PTX name given by `export_name`. Generated locals and
//! entry parameters are `Span::mixed_site()` names, which no user token
//! can name.
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
//!   every other shape): the constant of [`super::interface`], evaluated
//!   once per target;
//! - which parameters are inputs (`&[T]`): a marker static per entry point
//!   names them, and `gpu-builder` marks those pointer parameters `noalias
//!   readonly`, so their loads become `ld.global.nc` (see
//!   `gpu_builder::kernel_inputs` for the argument).

use super::interface::{block_const, instance_type, slot_type};
use super::kinds::SlotSpec;
use super::model::{Instance, Kernel};
use super::params::{MatrixIndex, Param, ParamKind};
use super::substitute::substitute;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{GenericParam, Ident, Type};

pub fn emit(kernel: &Kernel) -> TokenStream {
    let scope = kernel.scope_type();
    let bodies: Vec<TokenStream> = if copies_per_instance(kernel) {
        kernel
            .instances
            .iter()
            .map(|i| body(kernel, Some(i)))
            .collect()
    } else {
        vec![body(kernel, None)]
    };
    let entries = kernel.instances.iter().enumerate().flat_map(|(index, i)| {
        entry_shapes(kernel)
            .into_iter()
            .map(move |shape| entry(kernel, i, index, shape))
    });
    quote! {
        impl #scope {
            #(#bodies)*
        }
        #(#entries)*
    }
}

/// `#[cfg]` keeping a kernel that declares `arch = "sm_XY"` out of the PTX
/// of earlier architectures (rustc's NVPTX target features: `-C
/// target-cpu=sm_90` sets `sm_70` to `sm_90`, and `sm_90a` only itself
/// besides): its body may use what only that architecture has. The host
/// always compiles it (the simulator runs it; the runtime refuses devices
/// older than it needs).
pub fn arch_gate(kernel: &Kernel) -> TokenStream {
    match &kernel.arch {
        Some(arch) => quote!(#[cfg(any(not(target_arch = "nvptx64"), target_feature = #arch))]),
        None => TokenStream::new(),
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

/// The body of one instance (or, with `None`, the generic body of all), as
/// an associated function of `k::Kernel`: the function as written, renamed,
/// with the generic parameter substituted and the witnesses bound for the
/// entry shape.
fn body(kernel: &Kernel, instance: Option<&Instance>) -> TokenStream {
    let mut function = kernel.function.clone();
    function.sig.ident = match instance {
        Some(i) => body_name(kernel, i),
        None => format_ident!("body"),
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
    let gate = arch_gate(kernel);
    quote! {
        // The body is compiled on the host too: the simulator runs it.
        #gate
        #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
        #[inline(always)]
        #[allow(clippy::too_many_arguments, non_snake_case)]
        #function
    }
}

/// The name of the body's first parameter, the entry shape token: hygienic,
/// so the kernel's own code cannot name it.
fn shape_token() -> Ident {
    Ident::new("__gpu_entry_shape", Span::mixed_site())
}

/// The body function of an instance (an associated function of
/// `k::Kernel`).
pub fn body_name(kernel: &Kernel, instance: &Instance) -> Ident {
    if instance.suffix.is_empty() || !copies_per_instance(kernel) {
        format_ident!("body")
    } else {
        format_ident!("body_{}", instance.suffix)
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

/// The entry point parameter holding `slot` of parameter `p`: the
/// parameter's own name for a value, else a hygienic `<name>__<suffix>`.
fn slot_ident(p: &Param, slot: &SlotSpec) -> Ident {
    match slot.suffix {
        None => p.name.clone(),
        Some(suffix) => Ident::new(&format!("{}__{suffix}", p.name), Span::mixed_site()),
    }
}

/// The entry point parameter of `p`'s slot with role `role`.
fn slot_with_role(p: &Param, role: &str) -> Option<Ident> {
    p.kind
        .spec()
        .slots
        .iter()
        .find(|s| s.role == role)
        .map(|s| slot_ident(p, s))
}

/// `index` is the instance's position (for its block shape constant);
/// `block_shape` whether the body is told the shape.
pub fn entry_parts(
    kernel: &Kernel,
    instance: &Instance,
    index: usize,
    shape: EntryShape,
) -> EntryParts {
    let device = &kernel.paths.device;
    let scope_type = kernel.scope_type();
    let body_name = body_name(kernel, instance);
    let mut params: Vec<(Ident, Type)> = Vec::new();
    // The slices handed to the body borrow this local: their lifetimes end
    // with the entry point's call, so a body that asks for `'static` ones
    // (to keep them past the launch) does not compile.
    let scope = Ident::new("__gpu_launch", Span::mixed_site());
    let mut rebuild = vec![quote! {
        let #scope = #device::__private::LaunchScope::new();
    }];
    let mut call_args = Vec::new();
    let mut inputs = Vec::new();
    if kernel.block.is_some() {
        let block = block_const(index);
        rebuild.push(quote! {
            // SAFETY: this kernel's launcher refuses every block shape but the
            // declared one (`KernelFunction`'s launch check, with the host's
            // evaluation of the same constant, which the runtime compared with
            // this one), and is the only safe way to launch this entry point.
            unsafe { #device::__private::assume_block_shape(#scope_type::#block) };
        });
    }
    for p in &kernel.params {
        let name = &p.name;
        let element = p.kind.element().map(|t| instance_type(kernel, instance, t));
        let spec = p.kind.spec();
        let slots: Vec<Ident> = spec.slots.iter().map(|s| slot_ident(p, s)).collect();
        if matches!(p.kind, ParamKind::Input(_)) {
            inputs.push(params.len());
        }
        for (ident, slot) in slots.iter().zip(spec.slots) {
            params.push((ident.clone(), slot_type(slot.ty, element.as_ref())));
        }
        rebuild.extend(rebuild_param(
            kernel,
            instance,
            p,
            element.as_ref(),
            &slots,
            &scope,
        ));
        call_args.push(quote!(#name));
    }
    for bound in &kernel.lengths {
        let find = |name: &Ident| {
            kernel
                .params
                .iter()
                .find(|p| p.name == *name)
                .and_then(|p| slot_with_role(p, "Len"))
                .expect("the model checked that both have an element count")
        };
        let (have, need) = (find(&bound.input), find(&bound.covered));
        let (input_str, covered_str) = (bound.input.to_string(), bound.covered.to_string());
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
    let call = match (&instance.arg, copies_per_instance(kernel)) {
        (Some(arg), false) => {
            quote!(#scope_type::#body_name::<#arg, { #entry_constant }>(#shape, #(#call_args),*))
        }
        _ => quote!(#scope_type::#body_name::<{ #entry_constant }>(#shape, #(#call_args),*)),
    };
    // A kernel that takes a `Cluster` ends each thread with the cluster's
    // last barrier pairs (`ClusterState::finish`), so that no block exits
    // while a peer may read its shared memory.
    let takes_cluster = kernel
        .params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Cluster));
    let call = if takes_cluster {
        let state = cluster_state();
        quote! {
            #call;
            // SAFETY: once, after the body, by every thread of the launch
            // (a cluster launch of the declared shape, as above).
            unsafe { #state.finish() }
        }
    } else {
        call
    };
    EntryParts {
        params,
        rebuild,
        call,
        inputs,
    }
}

/// The entry point's local holding its thread's `ClusterState`.
fn cluster_state() -> Ident {
    Ident::new("__gpu_cluster_state", Span::mixed_site())
}

/// The statement turning parameter `p`'s entry point parameters `slots`
/// into the body's parameter, for a parameter of element or value type
/// `element` (substituted for the instance); `scope` is the entry point's
/// `LaunchScope`.
fn rebuild_param(
    kernel: &Kernel,
    instance: &Instance,
    p: &Param,
    element: Option<&Type>,
    slots: &[Ident],
    scope: &Ident,
) -> Option<TokenStream> {
    let device = &kernel.paths.device;
    let name = &p.name;
    let elem = element.map(|e| e.to_token_stream()).unwrap_or_default();
    Some(match &p.kind {
        // The parameter itself. rustc's PTX kernel ABI passes values aligned
        // to at most 16 bytes (a larger alignment crashes the compiler):
        // refused first, while constants are evaluated.
        ParamKind::Scalar(_) | ParamKind::Value(_) => {
            let ty = element.expect("a value parameter has its type");
            quote_spanned! {p.ty.span()=>
                const _: () = #device::__private::require_parameter_align::<#ty>();
            }
        }
        ParamKind::Input(_) => {
            let [ptr, len] = [&slots[0], &slots[1]];
            quote! {
                // SAFETY: the launcher passed a live device allocation of `len`
                // elements that no argument of this launch writes.
                let #name: &[#elem] = #scope.input(unsafe { #device::__private::slice_from_kernel_param(#ptr, #len) });
            }
        }
        ParamKind::Output(_, map) => {
            let [ptr, len] = [&slots[0], &slots[1]];
            let map = map
                .as_ref()
                .map(|m| super::interface::instance_tokens(kernel, instance, m.to_token_stream()))
                .unwrap_or_else(|| quote!(#device::ownership::ByThread));
            quote! {
                // SAFETY: the launcher passed a live device allocation of `len`
                // elements, borrowed mutably for this launch alone; every thread
                // receives the same one, with the same map.
                let #name = #scope.output(unsafe { #device::DisjointSlice::<#elem, #map>::from_raw_parts(#ptr, #len) });
            }
        }
        ParamKind::MappedMatrix(_, map) => {
            let map = super::interface::instance_tokens(kernel, instance, map.to_token_stream());
            let [ptr, len, rows, cols] = [&slots[0], &slots[1], &slots[2], &slots[3]];
            quote! {
                // SAFETY: as for a `DisjointSlice2dU32`: `len == rows *
                // cols` elements (the launcher checked that the product fits
                // in a `u32`), borrowed mutably for this launch alone; every
                // thread receives the same, with the same map.
                let #name = #scope.output_mapped(unsafe { #device::DisjointMatrix::<#elem, #map>::from_kernel_param(#ptr, #len, #rows, #cols) });
            }
        }
        ParamKind::Output2d(_, rows_per_thread, index) => {
            let r = match rows_per_thread {
                Some(e) => super::interface::instance_tokens(kernel, instance, e.to_token_stream()),
                None => quote!(1),
            };
            // The `U32` form's extents are `u32`: its launcher checked that
            // the element count fits.
            let matrix = match index {
                MatrixIndex::Usize => quote!(#device::DisjointSlice2d),
                MatrixIndex::U32 => quote!(#device::DisjointSlice2dU32),
            };
            let [ptr, len, rows, cols] = [&slots[0], &slots[1], &slots[2], &slots[3]];
            quote! {
                // SAFETY: the launcher passed a live device allocation of
                // `len == rows * cols` elements (a 2-D view holds exactly
                // that product, which it checked; for the `U32` form, it
                // also checked that the product fits in a `u32`), borrowed
                // mutably for this launch alone; every thread receives the
                // same.
                let #name = #scope.output_2d(unsafe { #matrix::<#elem, { #r }>::from_kernel_param(#ptr, #len, #rows, #cols) });
            }
        }
        ParamKind::Output3d(_) => {
            let [ptr, depth, rows, cols] = [&slots[0], &slots[1], &slots[2], &slots[3]];
            quote! {
                // SAFETY: as for a matrix, with `depth * rows * cols` elements.
                let #name = #scope.output_3d(unsafe { #device::DisjointSlice3d::<#elem>::from_raw_parts(#ptr, #depth, #rows, #cols) });
            }
        }
        ParamKind::Atomic(_) => {
            let [ptr, len] = [&slots[0], &slots[1]];
            quote! {
                // SAFETY: as for outputs; `DeviceAtomic<T>` is `repr(transparent)`
                // over `T` and accessed only with atomic instructions.
                let #name: &[#device::DeviceAtomic<#elem>] = #scope.input(unsafe {
                    #device::__private::slice_from_kernel_param(#ptr.cast::<#device::DeviceAtomic<#elem>>(), #len)
                });
            }
        }
        ParamKind::TensorMap(_, ty) | ParamKind::TensorMapOut(_, ty) => {
            let ty = super::interface::instance_tokens(kernel, instance, ty.to_token_stream());
            let map = &slots[0];
            quote! {
                // SAFETY: the launcher passed the address of a live map's
                // encoding in global memory, 64-byte aligned, of this element
                // type, box and swizzle (it checked them against the type),
                // not written during the launch; for an output map, of a
                // buffer it borrowed mutably and tracked as written, whose
                // coordinates name distinct elements, with its box counts
                // after the encoding (`TensorMapOut::new` wrote them).
                let #name = unsafe { <#ty>::from_kernel_param(#map) };
            }
        }
        ParamKind::Block => quote! {
            // SAFETY: the entry point makes each thread's one token,
            // before the body runs (the model checked there is one
            // `Block` parameter at most).
            let #name = unsafe { #device::Block::for_kernel_entry() };
        },
        ParamKind::Grid => quote! {
            // SAFETY: only a `cooperative` kernel takes a `Grid` (the model
            // checked), and its launches are cooperative (the runtime reads
            // the interface description).
            let #name = unsafe { #device::Grid::for_kernel_entry() };
        },
        ParamKind::Cluster => {
            let state = cluster_state();
            quote! {
                let #state = #device::__private::ClusterState::new();
                // SAFETY: only a kernel declaring `cluster = ...` takes a
                // `Cluster` (the model checked), and the runtime launches it
                // only in clusters of that shape (it reads the interface
                // description; the PTX's `.reqnctapercluster` makes the
                // driver refuse any other). The state is this thread's, in
                // this frame, which runs its `finish` after the body
                // (`entry_parts`).
                let #name = unsafe { #device::Cluster::for_kernel_entry(&#state) };
            }
        }
        ParamKind::DynamicShared(_) => quote! {
            // SAFETY: the only `DynamicShared` of this kernel (the model
            // checked), so every thread views the memory as `#elem`.
            let #name = unsafe { #device::DynamicShared::<#elem>::for_kernel_entry() };
        },
    })
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

/// One PTX entry point, alone in an anonymous `const` (so that its Rust
/// name shadows nothing the user's tokens in its parameters name), with its
/// input marker.
fn entry(kernel: &Kernel, instance: &Instance, index: usize, shape: EntryShape) -> TokenStream {
    let name = shape.entry_name(&instance.entry);
    let EntryParts {
        params,
        rebuild,
        call,
        inputs,
    } = entry_parts(kernel, instance, index, shape);
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
    let function = Ident::new("__gpu_entry", Span::mixed_site());
    let gate = arch_gate(kernel);
    quote! {
        #[cfg(target_arch = "nvptx64")]
        #gate
        const _: () = {
            #[unsafe(export_name = #name)]
            #[allow(non_snake_case, clippy::too_many_arguments)]
            unsafe extern "ptx-kernel" fn #function(#(#params),*) {
                #(#rebuild)*
                #call
            }
        };
        #marker
    }
}
