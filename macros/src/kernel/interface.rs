//! Each instance's interface description (`gpu_device::__private::
//! interface`), emitted once as associated constants of `k::Kernel`, at
//! the kernel's scope, and so compiled by both targets from the same
//! tokens: the host's launcher holds its own, the device's is kept in the
//! PTX (the global `__gpu_abi$<entry>`), and the runtime compares them
//! before the first launch.
//!
//! The declared block shape is evaluated here too, once per instance and
//! target ([`block_const`]): the launcher checks launches against the
//! host's value, the entry points assume the device's, and the two are
//! compared as part of the descriptions.

use super::kinds::SlotType;
use super::model::{Instance, Kernel};
use super::params::ParamKind;
use super::substitute::substitute;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{Ident, Type};

/// The associated constants of `k::Kernel` for every instance: its
/// description and, for kernels declaring one, its block shape; and on the
/// device, the global that keeps the description in the PTX.
pub fn emit(kernel: &Kernel) -> TokenStream {
    let scope = kernel.scope_type();
    let device = &kernel.paths.device;
    let mut consts = Vec::new();
    let mut globals = Vec::new();
    for (index, instance) in kernel.instances.iter().enumerate() {
        let description = description_const(index);
        let body = description_value(kernel, instance, index);
        consts.push(quote! {
            #[doc(hidden)]
            pub const #description: #device::__private::interface::Description = #body;
        });
        if let Some(shape) = block_shape_value(kernel, instance) {
            let block = block_const(index);
            consts.push(quote! {
                #[doc(hidden)]
                pub const #block: [u32; 3] = #shape;
            });
        }
        let symbol = format!("__gpu_abi${}", instance.entry);
        // In the PTX of the architectures the entry points are in.
        let gate = super::device::arch_gate(kernel);
        globals.push(quote! {
            // The device's description, for the runtime to compare with the
            // host's. Nothing reads it on the device; gpu-builder keeps it.
            #[cfg(target_arch = "nvptx64")]
            #gate
            const _: () = {
                const LEN: usize = #device::__private::interface::encode(&#scope::#description, &mut []);
                #[unsafe(export_name = #symbol)]
                static DESCRIPTION: [u8; LEN] = {
                    let mut text = [0u8; LEN];
                    #device::__private::interface::encode(&#scope::#description, &mut text);
                    text
                };
            };
        });
    }
    quote! {
        impl #scope {
            #(#consts)*
        }
        #(#globals)*
    }
}

/// The name of instance `index`'s description constant.
pub fn description_const(index: usize) -> Ident {
    format_ident!("DESCRIPTION_{}", index)
}

/// The name of instance `index`'s block shape constant.
pub fn block_const(index: usize) -> Ident {
    format_ident!("BLOCK_{}", index)
}

/// The instance's declared block shape as a `[u32; 3]` constant expression
/// (checked when compiled), or `None` when the kernel declares none.
fn block_shape_value(kernel: &Kernel, instance: &Instance) -> Option<TokenStream> {
    let device = &kernel.paths.device;
    let [x, y, z] = kernel
        .block
        .as_ref()?
        .clone()
        .map(|e| instance_tokens(kernel, instance, e.to_token_stream()));
    Some(quote!(#device::__private::declared_block_shape(#x, #y, #z)))
}

/// `tokens` with the generic parameter replaced by the instance's type or
/// value.
pub fn instance_tokens(kernel: &Kernel, instance: &Instance, tokens: TokenStream) -> TokenStream {
    match (&kernel.generic, &instance.arg) {
        (Some(generic), Some(arg)) => substitute(tokens, &generic.name, arg),
        _ => tokens,
    }
}

/// `ty` for the instance.
pub fn instance_type(kernel: &Kernel, instance: &Instance, ty: &Type) -> Type {
    syn::parse2(instance_tokens(kernel, instance, ty.to_token_stream()))
        .expect("a substituted type is a type")
}

fn description_value(kernel: &Kernel, instance: &Instance, index: usize) -> TokenStream {
    let device = &kernel.paths.device;
    let interface = quote!(#device::__private::interface);
    let entry = &instance.entry;
    // (The parameters of the instance's type carry its layout.)
    let instance_value = match (&kernel.generic, &instance.arg) {
        (Some(generic), Some(arg)) if generic.const_type.is_some() => {
            let text = arg.to_string();
            quote!(#interface::Instance::Value(#text))
        }
        (Some(_), Some(arg)) => {
            quote!(#interface::Instance::Type(#interface::type_facts::<#arg>()))
        }
        _ => quote!(#interface::Instance::None),
    };
    let block = match kernel.block {
        Some(_) => {
            let block = block_const(index);
            quote!(::core::option::Option::Some(Self::#block))
        }
        None => quote!(::core::option::Option::None),
    };
    let launch_bounds = match &kernel.launch_bounds {
        Some(bounds) => {
            let [max, min] = bounds
                .clone()
                .map(|e| instance_tokens(kernel, instance, e.to_token_stream()));
            let declared = match kernel.block {
                Some(_) => {
                    let block = block_const(index);
                    quote!(::core::option::Option::Some(Self::#block))
                }
                None => quote!(::core::option::Option::None),
            };
            quote!(::core::option::Option::Some(#device::__private::declared_launch_bounds(#max, #min, #declared)))
        }
        None => quote!(::core::option::Option::None),
    };
    let cooperative = kernel.cooperative;
    let cluster = match &kernel.cluster {
        Some(extents) => {
            let [x, y, z] = extents
                .clone()
                .map(|e| instance_tokens(kernel, instance, e.to_token_stream()));
            quote!(::core::option::Option::Some(#device::__private::declared_cluster_shape(#x, #y, #z)))
        }
        None => quote!(::core::option::Option::None),
    };
    let arch = match &kernel.arch {
        Some(arch) => quote!(::core::option::Option::Some(#arch)),
        None => quote!(::core::option::Option::None),
    };
    let lengths = kernel.lengths.iter().map(|bound| {
        let (input, covered) = (bound.input.to_string(), bound.covered.to_string());
        quote!((#input, #covered))
    });
    let params = kernel.params.iter().map(|p| {
        let name = p.name.to_string();
        let spec = p.kind.spec();
        let kind = Ident::new(spec.variant, Span::call_site());
        let written = p.kind.element();
        let element = written.map(|t| instance_type(kernel, instance, t));
        // A value's or element's type is `DeviceCopy` (its layout is part of
        // the description): the one check of it, spanned on the type.
        let facts = match (&p.kind, &element, written) {
            (ParamKind::DynamicShared(_), Some(t), _) => {
                quote!(::core::option::Option::Some(#interface::type_facts::<#t>()))
            }
            (_, Some(t), Some(w)) => {
                let copy_facts = quote_spanned!(w.span()=> #interface::copy_facts::<#t>());
                quote!(::core::option::Option::Some(#copy_facts))
            }
            _ => quote!(::core::option::Option::None),
        };
        let slots = spec.slots.iter().map(|slot| {
            let role = Ident::new(slot.role, Span::call_site());
            let ty = slot_type(slot.ty, element.as_ref());
            quote!(#interface::Slot { role: #interface::Role::#role, ty: #interface::type_facts::<#ty>() })
        });
        // An output's map, with the thread count it needs (checked against
        // a declared block shape when the constant is evaluated).
        let map = match p.kind.map() {
            Some(map) => {
                let map = instance_type(kernel, instance, map);
                let facts = match kernel.block {
                    Some(_) => {
                        let block = block_const(index);
                        quote_spanned!(map.span()=> #interface::map_facts_in_block::<#map>(Self::#block))
                    }
                    None => quote_spanned!(map.span()=> #interface::map_facts::<#map>()),
                };
                quote!(::core::option::Option::Some(#facts))
            }
            None => quote!(::core::option::Option::None),
        };
        quote! {
            #interface::Param {
                name: #name,
                kind: #interface::Kind::#kind,
                ty: #facts,
                slots: &[#(#slots),*],
                map: #map,
            }
        }
    });
    quote! {
        #interface::Description {
            entry: #entry,
            instance: #instance_value,
            block: #block,
            lengths: &[#(#lengths),*],
            launch_bounds: #launch_bounds,
            cooperative: #cooperative,
            cluster: #cluster,
            arch: #arch,
            params: &[#(#params),*],
        }
    }
}

/// A slot's type in the entry point, for a parameter of element or value
/// type `element`.
pub fn slot_type(ty: SlotType, element: Option<&Type>) -> Type {
    let element = || element.expect("a kind with slots has a type");
    match ty {
        SlotType::Value => element().clone(),
        SlotType::ConstPointer => {
            let e = element();
            syn::parse_quote!(*const #e)
        }
        SlotType::MutPointer => {
            let e = element();
            syn::parse_quote!(*mut #e)
        }
        SlotType::Usize => syn::parse_quote!(usize),
        SlotType::U32 => syn::parse_quote!(u32),
    }
}
