//! Host side: the kernel's module `k` and its launcher.
//!
//! `mod k` holds only items of ours: `k::Kernel` (on both targets: the type
//! whose associated items are the body, the interface descriptions and the
//! host entries), `k::Launcher` (what `launch!` calls: `k::Launcher::new(config)
//! .launch(args)`), and a generic kernel's `Instance` trait, sealed. The
//! launcher's and the host entries' code is an `impl` written at the
//! kernel's scope (in an anonymous `const`), so that every type, path and
//! expression of the user's resolves there, as for the device; a type
//! instance reaches the sealed trait's impls inside `mod k` through the
//! associated types of `k::Instances`, implemented at the kernel's scope.
//!
//! The launcher hands each argument once to the runtime's argument builder
//! (`LaunchArgs`), which checks its device, tracks it, records it for a
//! graph capture and stores its PTX parameters, then launches.

use super::attribute::KernelPaths;
use super::model::Kernel;
use super::params::{Param, ParamKind};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

pub fn emit(kernel: &Kernel) -> TokenStream {
    let module = launcher_module(kernel);
    let launcher = launcher_impl(kernel);
    let functions = super::host_entry::emit(kernel);
    quote! {
        #module
        #launcher
        #functions
    }
}

/// `mod k`: `Kernel`, `Launcher` and a generic kernel's `Instance` trait.
/// Paths are written one module below the kernel's (`paths`).
fn launcher_module(kernel: &Kernel) -> TokenStream {
    let name = &kernel.name;
    let vis = &kernel.vis;
    let docs = &kernel.docs;
    let paths = kernel.paths.in_launcher_module();
    let runtime = &paths.runtime;
    let launcher_type = launcher_type(runtime, &kernel.name.to_string());
    let instances = instance_trait(kernel, &paths);
    quote! {
        #(#docs)*
        #[allow(non_snake_case)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            /// The kernel's body, entry points and interface descriptions
            /// (generated; not for use).
            #[doc(hidden)]
            pub enum Kernel {}

            #launcher_type
            #instances
        }
    }
}

/// `k::Launcher`: a launch configuration for the kernel, whose `launch` and
/// `arguments` (written at the kernel's scope) take the kernel's arguments.
/// Host only, as every item of [`instance_trait`].
pub fn launcher_type(runtime: &syn::Path, name: &str) -> TokenStream {
    let doc = format!("A launch of `{name}` with a grid, block, stream and shared memory: `launch!({name}[grid, block, stream](...))` is `{name}::Launcher::new(config).launch(...)`.");
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #doc]
        pub struct Launcher<'s> {
            #[doc(hidden)]
            pub config: #runtime::LaunchConfig<'s>,
        }

        #[cfg(not(target_arch = "nvptx64"))]
        impl<'s> Launcher<'s> {
            /// A launch of the kernel with `config`.
            pub fn new(config: #runtime::LaunchConfig<'s>) -> Self {
                Launcher { config }
            }
        }
    }
}

/// A generic kernel's `Instance` trait, sealed: its supertrait is
/// implemented here alone, for each instance (a type instance named through
/// `Instances`, whose impl is at the kernel's scope, see
/// `host_entry.rs`). Nothing for other kernels.
fn instance_trait(kernel: &Kernel, paths: &KernelPaths) -> TokenStream {
    let Some(generic) = &kernel.generic else {
        return quote!();
    };
    let (device, runtime) = (&paths.device, &paths.runtime);
    let name_str = kernel.name.to_string();
    let t = &generic.name;
    let is_const = generic.const_type.is_some();
    let listed = kernel
        .instances
        .iter()
        .map(|i| {
            i.arg
                .as_ref()
                .map(|a| {
                    syn::parse2::<syn::Type>(a.clone())
                        .map(|t| super::params::type_name(&t))
                        .unwrap_or_else(|_| a.to_string())
                })
                .unwrap_or_default()
        })
        .collect::<Vec<_>>()
        .join("`, `");
    let (message, label, note) = if is_const {
        (
            format!("kernel `{name_str}` was not compiled for `{t}` = this value"),
            format!("`{name_str}` has instances for `{listed}` only"),
            "add the value to the list in `#[kernel(...)]`",
        )
    } else {
        (
            format!("kernel `{name_str}` was not compiled for `{{Self}}`"),
            format!("`{name_str}` has instances for `{listed}` only"),
            "add the type to the list in `#[kernel(...)]`",
        )
    };
    let supertrait = if is_const {
        quote!()
    } else {
        quote!(+ #device::DeviceCopy)
    };
    let type_names: Vec<Ident> = (0..kernel.instances.len())
        .map(instance_type_name)
        .collect();
    // The seal, on the instance types: a type instance as the kernel's
    // scope names it (`Instances`, implemented there), a const one by value.
    let seals = kernel.instances.iter().enumerate().map(|(index, i)| {
        let instance_ty = if is_const {
            let arg = i
                .arg
                .as_ref()
                .expect("generic kernels have instance arguments");
            quote!(#runtime::Const<{ #arg }>)
        } else {
            let of = &type_names[index];
            quote!(<Kernel as Instances>::#of)
        };
        quote! {
            #[cfg(not(target_arch = "nvptx64"))]
            impl sealed::Sealed for #instance_ty {}
        }
    });
    let instances = (!is_const).then(|| {
        quote! {
            /// The instance types, as the kernel's scope names them (generated).
            #[cfg(not(target_arch = "nvptx64"))]
            #[doc(hidden)]
            pub trait Instances {
                #(type #type_names;)*
            }
        }
    });
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        mod sealed {
            /// Implemented by the instances alone: `Instance` cannot be
            /// implemented outside this module.
            pub trait Sealed {}
        }

        /// The types (or values) this kernel was compiled for.
        #[cfg(not(target_arch = "nvptx64"))]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        pub trait Instance: sealed::Sealed #supertrait {
            #[doc(hidden)]
            fn function() -> &'static #runtime::__private::KernelFunction;
        }

        #instances
        #(#seals)*
    }
}

/// The associated type of `k::Instances` naming instance `index`.
pub fn instance_type_name(index: usize) -> Ident {
    format_ident!("Of{}", index)
}

/// The associated function of `k::Kernel` returning instance `index`'s
/// `KernelFunction`.
pub fn function_fn(index: usize) -> Ident {
    format_ident!("function_{}", index)
}

/// `impl k::Launcher`: `launch` and `arguments`, at the kernel's scope.
fn launcher_impl(kernel: &Kernel) -> TokenStream {
    let name = &kernel.name;
    let name_str = name.to_string();
    let runtime = &kernel.paths.runtime;
    let scope = kernel.scope_type();
    let args = Ident::new("__gpu_args", Span::mixed_site());
    let stream = Ident::new("__gpu_stream", Span::mixed_site());
    let launch_params: Vec<TokenStream> = kernel
        .params
        .iter()
        .filter_map(|p| launcher_param(p, runtime))
        .collect();
    let mut checks = Vec::new();
    let mut pushes = Vec::new();
    let len_local = |p: &Ident| Ident::new(&format!("__gpu_len_{p}"), Span::mixed_site());
    for p in &kernel.params {
        let pname = &p.name;
        let pname_str = pname.to_string();
        let span = p.ty.span();
        // A value crosses by copy: its type is `DeviceCopy`, which the
        // interface description checks, spanned on the type (a scalar's name
        // may be shadowed: `type u64 = &'static mut [u32];`).
        match &p.kind {
            ParamKind::Value(ty) => {
                // rustc leaves zero-sized parameters out of a PTX entry
                // point: the arguments after one would shift on a GPU.
                checks.push(quote_spanned! {span=>
                    const {
                        ::core::assert!(
                            ::core::mem::size_of::<#ty>() != 0,
                            "a kernel parameter passed by value cannot be zero-sized: the PTX entry point leaves it out, and the arguments after it would shift"
                        )
                    };
                });
            }
            ParamKind::Scalar(_)
            | ParamKind::Input(_)
            | ParamKind::Output(..)
            | ParamKind::MappedMatrix(..)
            | ParamKind::Output2d(..)
            | ParamKind::Output3d(_)
            | ParamKind::Atomic(_)
            | ParamKind::TensorMap(..)
            | ParamKind::TensorMapOut(..)
            | ParamKind::Block
            | ParamKind::Grid
            | ParamKind::Cluster
            | ParamKind::DynamicShared(_) => {}
        }
        let Some(method) = p.kind.spec().builder else {
            // Built on the device: not an argument of the launcher.
            continue;
        };
        let method = Ident::new(method, Span::call_site());
        let borrow = if p.kind.spec().writes {
            quote!(&mut #pname)
        } else {
            quote!(&#pname)
        };
        let bound = kernel
            .lengths
            .iter()
            .any(|b| b.input == *pname || b.covered == *pname);
        pushes.push(match &p.kind {
            // A value: nothing to check.
            ParamKind::Scalar(_) | ParamKind::Value(_) => quote!(#args.as_mut().#method(#borrow);),
            // Checked against the parameter's type: its box and swizzle.
            ParamKind::TensorMap(_, ty) | ParamKind::TensorMapOut(_, ty) => {
                quote!(#args.as_mut().#method::<#ty, _>(#pname_str, #pname)?;)
            }
            // Its element count, for the length bounds.
            _ if bound => {
                let len = len_local(pname);
                quote!(let #len = #args.as_mut().#method(#pname_str, #borrow)?;)
            }
            _ => quote!(#args.as_mut().#method(#pname_str, #borrow)?;),
        });
    }
    for bound in &kernel.lengths {
        let (have, need) = (len_local(&bound.input), len_local(&bound.covered));
        let (input_str, covered_str) = (bound.input.to_string(), bound.covered.to_string());
        pushes.push(quote! {
            #runtime::__private::check_len_at_least(#name_str, (#input_str, #have), (#covered_str, #need))?;
        });
    }
    let slot_count: usize = kernel
        .params
        .iter()
        .map(|p| p.kind.spec().slots.len())
        .sum();
    let signature = kernel_signature(kernel);
    let (generics, function, extra_where) = match &kernel.generic {
        None => {
            let function = function_fn(0);
            (quote!(), quote!(#scope::#function()), quote!())
        }
        Some(generic) => {
            let t = &generic.name;
            if let Some(const_type) = &generic.const_type {
                (
                    quote!(<const #t: #const_type>),
                    quote!(<#runtime::Const<#t> as #name::Instance>::function()),
                    quote!(#runtime::Const<#t>: #name::Instance,),
                )
            } else {
                // The kernel's own bounds on its type parameter hold on the
                // host too: associated types in parameters may need them.
                let bounds = kernel
                    .function
                    .sig
                    .generics
                    .type_params()
                    .flat_map(|p| p.bounds.iter());
                (
                    quote!(<#t: #name::Instance #(+ #bounds)*>),
                    quote!(<#t as #name::Instance>::function()),
                    quote!(),
                )
            }
        }
    };
    let where_predicates = kernel
        .function
        .sig
        .generics
        .where_clause
        .as_ref()
        .map(|w| {
            let p = w.predicates.iter();
            quote!(#(#p,)*)
        })
        .unwrap_or_default();
    let where_clause = quote!(where #extra_where #where_predicates);
    let arguments_doc = format!(
        "The arguments of `{signature}` with the launch's grid, block and shared memory, checked as a launch on its stream (or the current one) would be, without launching: for a graph's kernel node (`GraphExec::set_kernel_args`).\n\nUsually called through `kernel_args!({name_str}[grid, block](...))`."
    );
    let block_note = kernel
        .block
        .as_ref()
        .map(|extents| {
            let extents = extents
                .iter()
                .map(|e| quote::ToTokens::to_token_stream(e).to_string())
                .collect::<Vec<_>>()
                .join(", ");
            format!(" The kernel runs only in blocks of `({extents})` threads (its `block` option): any other block shape is an error.")
        })
        .unwrap_or_default();
    let arguments_taken: String = kernel
        .params
        .iter()
        .filter_map(|p| {
            let takes = p.kind.spec().launcher_takes?;
            let takes = match p.kind.element() {
                Some(t) => takes.replace("<T>", &format!("<{}>", super::params::type_name(t))),
                None => takes.to_string(),
            };
            let written = super::params::type_name(&p.ty);
            Some(format!(
                "\n- `{}` (the kernel's `{written}`): {takes}",
                p.name
            ))
        })
        .collect();
    let launch_doc = format!(
        "Launches `{signature}` with the launch's grid, block, stream and shared memory.\n\nUsually called through `launch!({name_str}[grid, block, stream](...))`. Returns once the launch is queued; errors name the kernel and what was wrong.{block_note}\n\nThe arguments:{arguments_taken}"
    );
    let safety = quote! {
        // SAFETY: the arguments added below are the kernel's parameters, in
        // order, each added with the method of its kind and of its type:
        // generated from the same model as the instance's entry points and
        // its interface description (which the runtime checks against the
        // PTX and against each method's slots).
    };
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        impl<'s> #name::Launcher<'s> {
            #[doc = #launch_doc]
            // The kernel's parameter names, whose style the kernel's body answers for.
            #[allow(clippy::too_many_arguments, unused_mut, non_snake_case)]
            pub fn launch #generics (self, #(#launch_params),*) -> #runtime::Result<()> #where_clause {
                #(#checks)*
                #safety
                let #stream = self.config.resolve_stream()?;
                let mut #args = ::core::pin::pin!(unsafe {
                    #runtime::__private::LaunchArgs::<'_, #slot_count>::for_launch(#function, &self.config, &#stream)
                });
                #(#pushes)*
                #args.launch()
            }

            #[doc = #arguments_doc]
            // The kernel's parameter names, whose style the kernel's body answers for.
            #[allow(clippy::too_many_arguments, unused_mut, non_snake_case)]
            pub fn arguments #generics (self, #(#launch_params),*) -> #runtime::Result<#runtime::KernelArgs> #where_clause {
                #(#checks)*
                #safety
                let #stream = self.config.resolve_stream()?;
                let mut #args = ::core::pin::pin!(unsafe {
                    #runtime::__private::LaunchArgs::<'_, #slot_count>::for_graph_node(#function, &self.config, &#stream)
                });
                #(#pushes)*
                #args.kernel_args()
            }
        }
    }
}

/// The launcher's parameter for the kernel's parameter `p` (`None` for
/// those built on the device); `runtime` as seen where it is written.
pub fn launcher_param(p: &Param, runtime: &syn::Path) -> Option<TokenStream> {
    let name = &p.name;
    Some(match &p.kind {
        ParamKind::Scalar(ty) | ParamKind::Value(ty) => quote!(#name: #ty),
        ParamKind::Input(elem) => quote!(#name: impl #runtime::DeviceInput<#elem>),
        ParamKind::Output(elem, _) | ParamKind::Atomic(elem) => {
            quote!(mut #name: impl #runtime::DeviceOutput<#elem>)
        }
        ParamKind::Output2d(elem, _, _) | ParamKind::MappedMatrix(elem, _) => {
            quote!(mut #name: #runtime::DeviceView2dMut<'_, #elem>)
        }
        ParamKind::Output3d(elem) => quote!(mut #name: #runtime::DeviceView3dMut<'_, #elem>),
        ParamKind::TensorMap(elem, _) => quote!(#name: &#runtime::TensorMap<'_, #elem>),
        ParamKind::TensorMapOut(elem, _) => {
            quote!(#name: &mut #runtime::TensorMapOut<'_, #elem>)
        }
        ParamKind::Block | ParamKind::Grid | ParamKind::Cluster | ParamKind::DynamicShared(_) => {
            return None
        }
    })
}

fn kernel_signature(kernel: &Kernel) -> String {
    let params = kernel
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name, super::params::type_name(&p.ty)))
        .collect::<Vec<_>>()
        .join(", ");
    let generics = kernel
        .generic
        .as_ref()
        .map(|g| match &g.const_type {
            Some(ty) => format!("<const {}: {}>", g.name, super::params::type_name(ty)),
            None => format!("<{}>", g.name),
        })
        .unwrap_or_default();
    format!("{}{generics}({params})", kernel.name)
}
