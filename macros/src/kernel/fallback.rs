//! What `#[kernel]` emits for a kernel with errors, besides the errors: the
//! items the rest of the crate (and an IDE) expects, so that the macro's
//! errors are the only ones.
//!
//! - On the host, the function as written (minus what cannot compile as a
//!   plain function: `const`, `extern`, `...`), so the IDE keeps analysing
//!   its body and its uses find it.
//! - On the host, a launcher module of the kernel's name whose
//!   `Launcher`'s `launch` and `arguments` take the launcher's arguments
//!   for the well-formed parameters and any value for the others, so
//!   `launch!(k[..](..))` and `kernel_args!` still resolve and check what
//!   they can. Their bodies are never run: the crate does not compile.
//!
//! Nothing is emitted for the device: the errors stop that build.

use super::host::launcher_param;
use super::model::{Failure, Partial};
use super::params::{is_device_built, Param};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::{FnArg, GenericParam, ItemFn, Pat};

pub fn emit(failure: Failure, item: TokenStream) -> TokenStream {
    let errors = failure.errors.into_compile_error();
    let Some(partial) = failure.partial else {
        // Not a function: the item as written, so its uses still resolve.
        return quote!(#errors #item);
    };
    let function = host_function(&partial.function);
    let launcher = launcher(&partial);
    quote! {
        #errors
        #function
        #launcher
    }
}

/// The function as written, compiled on the host only; `None` for a method
/// (`self` in a free function would be another error).
fn host_function(function: &ItemFn) -> Option<TokenStream> {
    if matches!(function.sig.inputs.first(), Some(FnArg::Receiver(_))) {
        return None;
    }
    let mut function = function.clone();
    function.sig.constness = None;
    function.sig.abi = None;
    function.sig.variadic = None;
    let generic = function
        .sig
        .generics
        .params
        .iter()
        .any(|p| !matches!(p, GenericParam::Lifetime(_)));
    if generic && super::device::mentions(function.block.to_token_stream(), "shared_array") {
        // A `shared_array!` static cannot depend on the generic parameter
        // (the kernel's instances are compiled with it substituted).
        function.block = syn::parse_quote!({ ::core::unimplemented!("the kernel has errors") });
    }
    Some(quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(dead_code, unused_variables, unused_mut)]
        #function
    })
}

/// The launcher module, with `launch` and `arguments` of the kernel's
/// launcher signature as far as it is known.
fn launcher(partial: &Partial) -> TokenStream {
    let function = &partial.function;
    let name = &function.sig.ident;
    let vis = &function.vis;
    let docs = function.attrs.iter().filter(|a| a.path().is_ident("doc"));
    // The launcher is written at the kernel's scope; its module one below.
    let runtime = &partial.paths.runtime;
    let module_runtime = &partial.paths.in_launcher_module().runtime;
    let params = function
        .sig
        .inputs
        .iter()
        .zip(&partial.params)
        .enumerate()
        .filter_map(|(index, (arg, param))| launcher_argument(index, arg, param.as_ref(), runtime));
    let params: Vec<TokenStream> = params.collect();
    // The kernel's generic parameters, as the launcher of a generic kernel
    // takes them (`launch::<f32>`); lifetimes are not the launcher's.
    let generic_params = function
        .sig
        .generics
        .params
        .iter()
        .filter_map(|p| match p {
            GenericParam::Lifetime(_) => None,
            GenericParam::Type(t) => {
                let mut t = t.clone();
                t.eq_token = None;
                t.default = None;
                Some(t.into_token_stream())
            }
            GenericParam::Const(c) => {
                let mut c = c.clone();
                c.eq_token = None;
                c.default = None;
                Some(c.into_token_stream())
            }
        })
        .collect::<Vec<_>>();
    let generics = if generic_params.is_empty() {
        quote!()
    } else {
        quote!(<#(#generic_params),*>)
    };
    let where_clause = &function.sig.generics.where_clause;
    let unreachable = quote!(::core::unreachable!(
        "the kernel has errors, so the crate does not compile"
    ));
    let launcher_type = super::host::launcher_type(module_runtime, &name.to_string());
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #(#docs)*
        #[allow(non_snake_case, dead_code)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            #launcher_type
        }

        #[cfg(not(target_arch = "nvptx64"))]
        const _: () = {
            impl<'s> #name::Launcher<'s> {
                /// Stands in for the launcher of a kernel with errors.
                #[allow(clippy::too_many_arguments, unused_variables, unused_mut)]
                pub fn launch #generics (
                    self,
                    #(#params),*
                ) -> #runtime::Result<()> #where_clause {
                    #unreachable
                }

                /// Stands in for the arguments builder of a kernel with errors.
                #[allow(clippy::too_many_arguments, unused_variables, unused_mut)]
                pub fn arguments #generics (
                    self,
                    #(#params),*
                ) -> #runtime::Result<#runtime::KernelArgs> #where_clause {
                    #unreachable
                }
            }
        };
    }
}

/// The launcher's parameter for the kernel's parameter `arg`: the usual one
/// if it is well formed, any value if not, none if it is built on the device.
fn launcher_argument(
    index: usize,
    arg: &FnArg,
    param: Option<&Param>,
    runtime: &syn::Path,
) -> Option<TokenStream> {
    if let Some(param) = param {
        return launcher_param(param, runtime);
    }
    let FnArg::Typed(typed) = arg else {
        return None;
    };
    if is_device_built(&typed.ty) {
        return None;
    }
    let name = match &*typed.pat {
        Pat::Ident(p) => p.ident.clone(),
        _ => format_ident!("__argument_{}", index),
    };
    Some(quote!(#name: impl ::core::marker::Sized))
}
