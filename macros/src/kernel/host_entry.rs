//! Host side, below the launcher: per instance, the `KernelFunction` the
//! launcher launches (its PTX entry points, its interface description) and
//! the host entry points the CPU simulator runs in their place, one per
//! entry shape, taking one pointer per PTX parameter as the entry points
//! do; and a type-generic kernel's `Instance` impls. All are items of
//! `impl k::Kernel` (or impls) at the kernel's scope.

use super::attribute::KernelPaths;
use super::device::{entry_parts, entry_shapes, EntryShape};
use super::host::{function_fn, instance_type_name};
use super::interface::description_const;
use super::model::Kernel;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

/// `impl k::Kernel`: per instance, its `KernelFunction` and the host entry
/// points the simulator runs; `impl k::Instances` for a type-generic kernel.
pub fn emit(kernel: &Kernel) -> TokenStream {
    let scope = kernel.scope_type();
    let name = &kernel.name;
    let mut items = Vec::new();
    for (index, instance) in kernel.instances.iter().enumerate() {
        items.push(function_of(kernel, instance, index));
        for shape in entry_shapes(kernel) {
            items.push(host_call(kernel, instance, index, shape));
        }
    }
    let runtime = &kernel.paths.runtime;
    let instances = match &kernel.generic {
        None => quote!(),
        Some(generic) => {
            let is_const = generic.const_type.is_some();
            let types = kernel.instances.iter().enumerate().map(|(index, i)| {
                let of = instance_type_name(index);
                let arg = i
                    .arg
                    .as_ref()
                    .expect("generic kernels have instance arguments");
                quote!(type #of = #arg;)
            });
            let named = (!is_const).then(|| {
                quote! {
                    #[cfg(not(target_arch = "nvptx64"))]
                    impl #name::Instances for #scope {
                        #(#types)*
                    }
                }
            });
            let impls = kernel.instances.iter().enumerate().map(|(index, i)| {
                let arg = i
                    .arg
                    .as_ref()
                    .expect("generic kernels have instance arguments");
                // Spanned on the instance, where a missing bound is reported.
                let instance_ty = if is_const {
                    quote_spanned!(arg.span()=> #runtime::Const<{ #arg }>)
                } else {
                    quote_spanned!(arg.span()=> #arg)
                };
                let function = function_fn(index);
                quote! {
                    #[cfg(not(target_arch = "nvptx64"))]
                    impl #name::Instance for #instance_ty {
                        fn function() -> &'static #runtime::__private::KernelFunction {
                            #scope::#function()
                        }
                    }
                }
            });
            quote! {
                #named
                #(#impls)*
            }
        }
    };
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(non_snake_case)]
        impl #scope {
            #(#items)*
        }
        #instances
    }
}

/// Instance `index`'s `fn function_<index>() -> &'static KernelFunction`:
/// its PTX entry points, its host entry points for the simulator and its
/// interface description.
fn function_of(kernel: &Kernel, instance: &super::model::Instance, index: usize) -> TokenStream {
    let KernelPaths {
        runtime, module, ..
    } = &kernel.paths;
    let scope = kernel.scope_type();
    let name_str = kernel.name.to_string();
    let shapes = entry_shapes(kernel);
    let entry = EntryShape::General.entry_name(&instance.entry);
    let entry_1d = EntryShape::OneDimensional.entry_name(&instance.entry);
    let description = description_const(index);
    let host = |shape| host_call_name(index, shape);
    let (general, one_dimensional) = (host(EntryShape::General), host(EntryShape::OneDimensional));
    let (entry_2d, call_2d) = if shapes.contains(&EntryShape::ZExtentOne) {
        let name = EntryShape::ZExtentOne.entry_name(&instance.entry);
        let call = host(EntryShape::ZExtentOne);
        (
            quote!(::core::option::Option::Some(#name)),
            quote!(::core::option::Option::Some(#scope::#call as unsafe fn(*const *mut ::core::ffi::c_void))),
        )
    } else {
        (
            quote!(::core::option::Option::None),
            quote!(::core::option::Option::None),
        )
    };
    let slot_count: usize = kernel
        .params
        .iter()
        .map(|p| p.kind.spec().slots.len())
        .sum();
    let function = function_fn(index);
    quote! {
        #[doc(hidden)]
        fn #function() -> &'static #runtime::__private::KernelFunction {
            const SIZES: [usize; #slot_count] = #scope::#description.slot_sizes::<#slot_count>();
            // SAFETY: the entry points are this instance's, in `module` (the
            // kernel crate's own: `new` refuses, at compile time, another
            // crate's), with the parameters its description lists; the host
            // entries run its body with the same parameters, whose sizes
            // are `SIZES`.
            static FUNCTION: #runtime::__private::KernelFunction = unsafe {
                #runtime::__private::KernelFunction::new(
                    &#module,
                    #name_str,
                    [#entry, #entry_1d],
                    #entry_2d,
                    #runtime::__private::HostEntry::new(#scope::#general, #scope::#one_dimensional, #call_2d, &SIZES),
                    &#scope::#description,
                    #runtime::crate_identity!(),
                )
            };
            &FUNCTION
        }
    }
}

/// The name of instance `index`'s host entry of `shape`.
fn host_call_name(index: usize, shape: EntryShape) -> Ident {
    match shape {
        EntryShape::General => format_ident!("host_entry_{}", index),
        EntryShape::OneDimensional => format_ident!("host_entry_{}_1d", index),
        EntryShape::ZExtentOne => format_ident!("host_entry_{}_2d", index),
    }
}

/// One of the instance's entry points as a host function taking one pointer
/// per PTX parameter (the simulator's calling convention).
fn host_call(
    kernel: &Kernel,
    instance: &super::model::Instance,
    index: usize,
    shape: EntryShape,
) -> TokenStream {
    let name = host_call_name(index, shape);
    let super::device::EntryParts {
        params,
        rebuild,
        call,
        ..
    } = entry_parts(kernel, instance, index, shape);
    let pointers = Ident::new("__gpu_params", Span::mixed_site());
    let reads = params.iter().enumerate().map(|(slot, (name, ty))| {
        quote! {
            // SAFETY: slot `#slot` points to a live value of the parameter's type
            // (the caller's contract, as for the PTX entry point); the copy the
            // simulator made may be less aligned than the type.
            let #name: #ty = unsafe { ::core::ptr::read_unaligned((*#pointers.add(#slot)).cast::<#ty>()) };
        }
    });
    quote! {
        /// # Safety
        /// `params` holds one pointer per PTX parameter of the entry point,
        /// each to a live value of that parameter's type, and runs inside a
        /// simulated GPU thread.
        #[doc(hidden)]
        #[allow(non_snake_case, unused_unsafe, clippy::too_many_arguments)]
        unsafe fn #name(#pointers: *const *mut ::core::ffi::c_void) {
            #(#reads)*
            #(#rebuild)*
            #call
        }
    }
}
