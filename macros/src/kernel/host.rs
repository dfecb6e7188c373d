//! Host side: a module named after the kernel whose `launch` function takes
//! typed arguments, checks them, and launches the PTX entry point.

use super::model::{Kernel, ParamKind};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

pub fn emit(kernel: &Kernel) -> TokenStream {
    let name = &kernel.name;
    let vis = &kernel.vis;
    let docs = &kernel.docs;
    let name_str = name.to_string();

    let mut launch_params = Vec::new();
    let mut marshal = Vec::new();
    let mut slots = Vec::new();
    let mut checks = Vec::new();
    // Hooks of slice arguments around the launch (tracking of mapped host memory).
    let mut before = Vec::new();
    let mut after = Vec::new();
    for p in &kernel.params {
        let pname = &p.name;
        let pname_str = pname.to_string();
        let span = p.ty.span();
        match &p.kind {
            ParamKind::Scalar(ty) => {
                launch_params.push(quote!(#pname: #ty));
                marshal.push(quote!(let mut #pname: #ty = #pname;));
                slots.push(quote!(
                    ::core::ptr::addr_of_mut!(#pname).cast::<::core::ffi::c_void>()
                ));
            }
            ParamKind::Value(ty) => {
                launch_params.push(quote!(#pname: #ty));
                checks.push(quote_spanned! {span=>
                    ::gpu_runtime::__private::assert_device_copy::<#ty>();
                });
                marshal.push(quote!(let mut #pname: #ty = #pname;));
                slots.push(quote!(
                    ::core::ptr::addr_of_mut!(#pname).cast::<::core::ffi::c_void>()
                ));
            }
            ParamKind::Input(elem) => {
                let slice = quote::format_ident!("__slice_{}", pname);
                launch_params.push(quote!(#pname: impl ::gpu_runtime::DeviceInput<#elem>));
                marshal.push(quote! {
                    let mut #slice = ::gpu_runtime::__private::SliceArg::input(&#pname, __device, __function, #pname_str)?;
                });
                before.push(quote!(::gpu_runtime::DeviceInput::<#elem>::before_device_access(&#pname, &__stream)?;));
                after.push(quote!(::gpu_runtime::DeviceInput::<#elem>::after_device_access(&#pname, &__stream)?;));
                slots.extend(slice_slots(&slice));
            }
            ParamKind::Output(elem) | ParamKind::Atomic(elem) => {
                let slice = quote::format_ident!("__slice_{}", pname);
                launch_params.push(quote!(mut #pname: impl ::gpu_runtime::DeviceOutput<#elem>));
                marshal.push(quote! {
                    let mut #slice = ::gpu_runtime::__private::SliceArg::output(&mut #pname, __device, __function, #pname_str)?;
                });
                before.push(quote!(::gpu_runtime::DeviceOutput::<#elem>::before_device_access(&#pname, &__stream)?;));
                after.push(quote!(::gpu_runtime::DeviceOutput::<#elem>::after_device_access(&#pname, &__stream)?;));
                slots.extend(slice_slots(&slice));
            }
        }
    }
    let slot_count = slots.len();
    let signature = kernel_signature(kernel);

    let (generics, function, instance_trait) = match &kernel.type_param {
        None => {
            let instance = &kernel.instances[0];
            let entry = &instance.entry;
            let entry_1d = super::device::one_dimensional_entry(entry);
            let host_entry = host_entry(kernel, instance);
            (
                quote!(),
                quote! {{
                    #host_entry
                    static FUNCTION: ::gpu_runtime::__private::KernelFunction =
                        ::gpu_runtime::__private::KernelFunction::new(&crate::KERNEL_MODULE, #name_str, #entry, #entry_1d, HOST_ENTRY);
                    &FUNCTION
                }},
                quote!(),
            )
        }
        Some(t) => {
            let impls = kernel.instances.iter().map(|i| {
                let ty = i.ty.as_ref().expect("generic kernels have instance types");
                let entry = &i.entry;
                let entry_1d = super::device::one_dimensional_entry(entry);
                let host_entry = host_entry(kernel, i);
                quote! {
                    impl Instance for #ty {
                        fn function() -> &'static ::gpu_runtime::__private::KernelFunction {
                            #host_entry
                            static FUNCTION: ::gpu_runtime::__private::KernelFunction =
                                ::gpu_runtime::__private::KernelFunction::new(&crate::KERNEL_MODULE, #name_str, #entry, #entry_1d, HOST_ENTRY);
                            &FUNCTION
                        }
                    }
                }
            });
            let listed = kernel
                .instances
                .iter()
                .map(|i| {
                    i.ty.as_ref()
                        .map(super::model::type_name)
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .join("`, `");
            let message = format!("kernel `{name_str}` was not compiled for `{{Self}}`");
            let label = format!("`{name_str}` has instances for `{listed}` only");
            (
                {
                    // The kernel's own bounds on its type parameter hold on the
                    // host too: associated types in parameters may need them.
                    let bounds = kernel
                        .function
                        .sig
                        .generics
                        .type_params()
                        .flat_map(|p| p.bounds.iter());
                    quote!(<#t: Instance #(+ #bounds)*>)
                },
                quote!(<#t as Instance>::function()),
                quote! {
                    /// The types this kernel was compiled for.
                    #[diagnostic::on_unimplemented(message = #message, label = #label, note = "add the type to the list in `#[kernel(...)]`")]
                    pub trait Instance: ::gpu_device::DeviceCopy {
                        #[doc(hidden)]
                        fn function() -> &'static ::gpu_runtime::__private::KernelFunction;
                    }
                    #(#impls)*
                },
            )
        }
    };
    let where_clause = &kernel.function.sig.generics.where_clause;
    let launch_doc = format!(
        "Launches `{signature}` with `config`'s grid, block, stream and shared memory.\n\nUsually called through `launch!({name_str}[grid, block, stream](...))`. Returns once the launch is queued; errors name the kernel and what was wrong."
    );
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #(#docs)*
        #[allow(non_snake_case)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            #instance_trait

            #[doc = #launch_doc]
            #[allow(clippy::too_many_arguments, unused_mut)]
            pub fn launch #generics (
                config: ::gpu_runtime::LaunchConfig<'_>,
                #(#launch_params),*
            ) -> ::gpu_runtime::Result<()> #where_clause {
                #(#checks)*
                let __function: &'static ::gpu_runtime::__private::KernelFunction = #function;
                let __stream = config.resolve_stream()?;
                let __device = __stream.device();
                #(#marshal)*
                let mut __params: [*mut ::core::ffi::c_void; #slot_count] = [#(#slots),*];
                #(#before)*
                // SAFETY: the parameter slots match the PTX entry point generated
                // from the same signature: each slice as (pointer, length), each
                // value by address, and they live until the call returns.
                unsafe { __function.launch(&config, &__stream, &mut __params) }?;
                #(#after)*
                ::core::result::Result::Ok(())
            }
        }
    }
}

/// The instance's body as the CPU simulator calls it, with the PTX entry
/// point's calling convention (one pointer per PTX parameter), as a `const
/// HOST_ENTRY` item.
fn host_entry(kernel: &Kernel, instance: &super::model::Instance) -> TokenStream {
    let super::device::EntryParts {
        params,
        rebuild,
        call,
    } = super::device::entry_parts(kernel, instance, false);
    let reads = params.iter().enumerate().map(|(slot, (name, ty))| {
        quote! {
            // SAFETY: slot `#slot` points to a live value of the parameter's type
            // (the caller's contract, as for the PTX entry point).
            let #name: #ty = unsafe { ::core::ptr::read((*__gpu_params.add(#slot)).cast::<#ty>()) };
        }
    });
    let sizes = params
        .iter()
        .map(|(_, ty)| quote!(::core::mem::size_of::<#ty>()));
    quote! {
        /// # Safety
        /// `params` holds one pointer per PTX parameter of the entry point,
        /// each to a live value of that parameter's type, and runs inside a
        /// simulated GPU thread.
        #[allow(non_snake_case, unused_unsafe, clippy::too_many_arguments)]
        unsafe fn __host_entry(__gpu_params: *const *mut ::core::ffi::c_void) {
            #(#reads)*
            #(#rebuild)*
            super::#call
        }
        const HOST_ENTRY: ::gpu_runtime::__private::HostEntry = ::gpu_runtime::__private::HostEntry {
            call: __host_entry,
            param_sizes: &[#(#sizes),*],
        };
    }
}

fn slice_slots(name: &syn::Ident) -> [TokenStream; 2] {
    [
        quote!(::core::ptr::addr_of_mut!(#name.ptr).cast::<::core::ffi::c_void>()),
        quote!(::core::ptr::addr_of_mut!(#name.len).cast::<::core::ffi::c_void>()),
    ]
}

fn kernel_signature(kernel: &Kernel) -> String {
    let params = kernel
        .params
        .iter()
        .map(|p| format!("{}: {}", p.name, super::model::type_name(&p.ty)))
        .collect::<Vec<_>>()
        .join(", ");
    let generics = kernel
        .type_param
        .as_ref()
        .map(|t| format!("<{t}>"))
        .unwrap_or_default();
    format!("{}{generics}({params})", kernel.name)
}
