//! Host side: a module named after the kernel whose `launch` function takes
//! typed arguments, checks them, and launches the PTX entry point.

use super::attribute::KernelPaths;
use super::device::EntryShape;
use super::model::Kernel;
use super::params::{MatrixIndex, Param, ParamKind};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

pub fn emit(kernel: &Kernel) -> TokenStream {
    let name = &kernel.name;
    let vis = &kernel.vis;
    let docs = &kernel.docs;
    let name_str = name.to_string();
    // The launcher module is one module below the kernel.
    let paths = kernel.paths.in_launcher_module();
    let (device, runtime) = (&paths.device, &paths.runtime);

    let mut launch_params = Vec::new();
    let mut marshal = Vec::new();
    let mut slots = Vec::new();
    let mut checks = Vec::new();
    // Hooks of slice arguments around the launch (tracking of mapped host memory).
    let mut before = Vec::new();
    let mut after = Vec::new();
    // The buffer arguments as a graph node holds them.
    let mut memory = Vec::new();
    for p in &kernel.params {
        let pname = &p.name;
        let pname_str = pname.to_string();
        let span = p.ty.span();
        launch_params.extend(launcher_param(p, runtime));
        match &p.kind {
            ParamKind::Scalar(ty) => {
                // A scalar's name may be shadowed (`type u64 = &'static mut
                // [u32];`): checked like any value that crosses by copy.
                checks.push(quote_spanned! {span=>
                    #runtime::__private::assert_device_copy::<#ty>();
                });
                marshal.push(quote!(let mut #pname: #ty = #pname;));
                slots.push(quote!(
                    ::core::ptr::addr_of_mut!(#pname).cast::<::core::ffi::c_void>()
                ));
            }
            ParamKind::Value(ty) => {
                // rustc leaves zero-sized parameters out of a PTX entry
                // point: the arguments after one would shift on a GPU.
                checks.push(quote_spanned! {span=>
                    #runtime::__private::assert_device_copy::<#ty>();
                    const {
                        ::core::assert!(
                            ::core::mem::size_of::<#ty>() != 0,
                            "a kernel parameter passed by value cannot be zero-sized: the PTX entry point leaves it out, and the arguments after it would shift"
                        )
                    };
                });
                marshal.push(quote!(let mut #pname: #ty = #pname;));
                slots.push(quote!(
                    ::core::ptr::addr_of_mut!(#pname).cast::<::core::ffi::c_void>()
                ));
            }
            ParamKind::Input(elem) => {
                let slice = quote::format_ident!("__slice_{}", pname);
                marshal.push(quote! {
                    let mut #slice = #runtime::__private::SliceArg::input(&#pname, __device, __function, #pname_str)?;
                });
                before.push(quote!(#runtime::DeviceInput::<#elem>::before_device_access(&#pname, &__stream)?;));
                after.push(quote!(#runtime::DeviceInput::<#elem>::after_device_access(&#pname, &__stream)?;));
                memory.push(quote!((#pname_str, #runtime::DeviceInput::<#elem>::graph_memory(&#pname), false)));
                slots.extend(slice_slots(&slice));
            }
            ParamKind::Output2d(elem, _, _) | ParamKind::Output3d(elem) => {
                let slice = quote::format_ident!("__slice_{}", pname);
                let three = matches!(p.kind, ParamKind::Output3d(_));
                let extents: Vec<syn::Ident> = if three {
                    vec![
                        quote::format_ident!("__depth_{}", pname),
                        quote::format_ident!("__rows_{}", pname),
                        quote::format_ident!("__cols_{}", pname),
                    ]
                } else {
                    vec![
                        quote::format_ident!("__rows_{}", pname),
                        quote::format_ident!("__cols_{}", pname),
                    ]
                };
                let u32_len = quote::format_ident!("__len_{}", pname);
                let u32_extents = matches!(p.kind, ParamKind::Output2d(_, _, MatrixIndex::U32));
                marshal.push(if u32_extents {
                    // A `DisjointSlice2dU32`: the element count and extents
                    // as `u32`, or an error naming the parameter.
                    quote! {
                        let mut #slice = #runtime::__private::SliceArg::output(&mut #pname, __device, __function, #pname_str)?;
                        let [mut #u32_len, #(mut #extents),*] = #runtime::__private::matrix_u32_extents(#pname.extents(), __function.name(), #pname_str)?;
                    }
                } else {
                    quote! {
                        let mut #slice = #runtime::__private::SliceArg::output(&mut #pname, __device, __function, #pname_str)?;
                        let (#(mut #extents),*) = #pname.extents();
                    }
                });
                before.push(quote!(#runtime::DeviceOutput::<#elem>::before_device_access(&#pname, &__stream)?;));
                after.push(quote!(#runtime::DeviceOutput::<#elem>::after_device_access(&#pname, &__stream)?;));
                memory.push(quote!((#pname_str, #runtime::DeviceOutput::<#elem>::graph_memory(&#pname), true)));
                slots.push(quote!(
                    ::core::ptr::addr_of_mut!(#slice.ptr).cast::<::core::ffi::c_void>()
                ));
                if u32_extents {
                    slots.push(quote!(
                        ::core::ptr::addr_of_mut!(#u32_len).cast::<::core::ffi::c_void>()
                    ));
                } else if !three {
                    // A matrix also passes its element count, `rows * cols`
                    // (the view holds exactly that many elements).
                    slots.push(quote!(
                        ::core::ptr::addr_of_mut!(#slice.len).cast::<::core::ffi::c_void>()
                    ));
                }
                for e in &extents {
                    slots.push(quote!(
                        ::core::ptr::addr_of_mut!(#e).cast::<::core::ffi::c_void>()
                    ));
                }
            }
            // Built on the device: not an argument of the launcher.
            ParamKind::Block | ParamKind::DynamicShared(_) => {}
            ParamKind::Output(elem) | ParamKind::Atomic(elem) => {
                let slice = quote::format_ident!("__slice_{}", pname);
                marshal.push(quote! {
                    let mut #slice = #runtime::__private::SliceArg::output(&mut #pname, __device, __function, #pname_str)?;
                });
                before.push(quote!(#runtime::DeviceOutput::<#elem>::before_device_access(&#pname, &__stream)?;));
                after.push(quote!(#runtime::DeviceOutput::<#elem>::after_device_access(&#pname, &__stream)?;));
                memory.push(quote!((#pname_str, #runtime::DeviceOutput::<#elem>::graph_memory(&#pname), true)));
                slots.extend(slice_slots(&slice));
            }
        }
    }
    for bound in &kernel.lengths {
        let (input, covered) = (&bound.input, &bound.covered);
        let have = quote::format_ident!("__slice_{}", input);
        let need = match kernel
            .params
            .iter()
            .find(|p| p.name == *covered)
            .map(|p| &p.kind)
        {
            Some(ParamKind::Output2d(_, _, MatrixIndex::U32)) => {
                let len = quote::format_ident!("__len_{}", covered);
                quote!(#len as usize)
            }
            _ => {
                let slice = quote::format_ident!("__slice_{}", covered);
                quote!(#slice.len)
            }
        };
        let (input_str, covered_str) = (input.to_string(), covered.to_string());
        marshal.push(quote! {
            #runtime::__private::check_len_at_least(__function.name(), (#input_str, #have.len), (#covered_str, #need))?;
        });
    }
    let slot_count = slots.len();
    let signature = kernel_signature(kernel);

    let (generics, function, instance_trait, extra_where) = match &kernel.generic {
        None => {
            let instance = &kernel.instances[0];
            let function = function_static(kernel, instance, &paths);
            // One static for `launch` and `arguments`: its address tells the
            // kernel apart (a graph node is updated with its own kernel's
            // arguments only).
            (quote!(), quote!(&FUNCTION), function, quote!())
        }
        Some(generic) => {
            let t = &generic.name;
            let is_const = generic.const_type.is_some();
            let impls = kernel.instances.iter().map(|i| {
                let arg = i
                    .arg
                    .as_ref()
                    .expect("generic kernels have instance arguments");
                let instance_ty = if is_const {
                    quote!(#runtime::Const<{ #arg }>)
                } else {
                    quote!(#arg)
                };
                let function = function_static(kernel, i, &paths);
                quote! {
                    impl Instance for #instance_ty {
                        fn function() -> &'static #runtime::__private::KernelFunction {
                            #function
                            &FUNCTION
                        }
                    }
                }
            });
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
                quote!(: #device::DeviceCopy)
            };
            let instance_trait = quote! {
                /// The types (or values) this kernel was compiled for.
                #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
                pub trait Instance #supertrait {
                    #[doc(hidden)]
                    fn function() -> &'static #runtime::__private::KernelFunction;
                }
                #(#impls)*
            };
            if let Some(const_type) = &generic.const_type {
                (
                    quote!(<const #t: #const_type>),
                    quote!(<#runtime::Const<#t> as Instance>::function()),
                    instance_trait,
                    quote!(#runtime::Const<#t>: Instance,),
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
                    quote!(<#t: Instance #(+ #bounds)*>),
                    quote!(<#t as Instance>::function()),
                    instance_trait,
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
        "The arguments of `{signature}` with `config`'s grid, block and shared memory, checked as a launch on `config`'s stream (or the current one) would be, without launching: for a graph's kernel node (`GraphExec::set_kernel_args`).\n\nUsually called through `kernel_args!({name_str}[grid, block](...))`."
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
    let launch_doc = format!(
        "Launches `{signature}` with `config`'s grid, block, stream and shared memory.\n\nUsually called through `launch!({name_str}[grid, block, stream](...))`. Returns once the launch is queued; errors name the kernel and what was wrong.{block_note}"
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
                config: #runtime::LaunchConfig<'_>,
                #(#launch_params),*
            ) -> #runtime::Result<()> #where_clause {
                #(#checks)*
                let __function: &'static #runtime::__private::KernelFunction = #function;
                let __stream = config.resolve_stream()?;
                let __device = __stream.device();
                #(#marshal)*
                let mut __params: [*mut ::core::ffi::c_void; #slot_count] = [#(#slots),*];
                #(#before)*
                #runtime::__private::graph_memory_of_launch(&__stream, || ::std::vec![#(#memory),*]);
                // SAFETY: the parameter slots match the PTX entry point generated
                // from the same signature: each slice as (pointer, length), each
                // value by address, and they live until the call returns.
                unsafe { __function.launch(&config, &__stream, &mut __params) }?;
                #(#after)*
                ::core::result::Result::Ok(())
            }

            #[doc = #arguments_doc]
            #[allow(clippy::too_many_arguments, unused_mut)]
            pub fn arguments #generics (
                config: #runtime::LaunchConfig<'_>,
                #(#launch_params),*
            ) -> #runtime::Result<#runtime::KernelArgs> #where_clause {
                #(#checks)*
                let __function: &'static #runtime::__private::KernelFunction = #function;
                let __stream = config.resolve_stream()?;
                let __device = __stream.device();
                #(#marshal)*
                let mut __params: [*mut ::core::ffi::c_void; #slot_count] = [#(#slots),*];
                let __memory: ::std::vec::Vec<(&'static str, ::core::option::Option<#runtime::__private::GraphMemory>, bool)> =
                    ::std::vec![#(#memory),*];
                // SAFETY: the parameter slots match the PTX entry point, as in
                // `launch`; the device memory they point to is `__memory`'s,
                // which the arguments keep alive.
                unsafe { __function.arguments(&config, &__stream, &mut __params, __memory) }
            }
        }
    }
}

/// The instance's `static FUNCTION: KernelFunction`: its PTX entry points,
/// its declared block shape, and its host entry points for the simulator.
/// `paths` as seen from the launcher module.
fn function_static(
    kernel: &Kernel,
    instance: &super::model::Instance,
    paths: &KernelPaths,
) -> TokenStream {
    let (runtime, module) = (&paths.runtime, &paths.module);
    let name_str = kernel.name.to_string();
    let shapes = super::device::entry_shapes(kernel);
    let entry = EntryShape::General.entry_name(&instance.entry);
    let entry_1d = EntryShape::OneDimensional.entry_name(&instance.entry);
    // The declared shape, evaluated (and checked) once per instance.
    let declared = super::device::block_shape(kernel, instance, &paths.device);
    let block_const = declared
        .as_ref()
        .map(|shape| quote!(const BLOCK_SHAPE: [u32; 3] = #shape;));
    let block_shape = declared.as_ref().map(|_| quote!(BLOCK_SHAPE));
    let host_entry = host_entry(kernel, instance, &shapes, block_shape.as_ref(), paths);
    let with_2d = shapes.contains(&EntryShape::ZExtentOne).then(|| {
        let entry_2d = EntryShape::ZExtentOne.entry_name(&instance.entry);
        quote!(.with_entry_2d(#entry_2d))
    });
    let with_block = block_shape
        .as_ref()
        .map(|shape| quote!(.with_block_shape(#shape)));
    quote! {
        #block_const
        #host_entry
        static FUNCTION: #runtime::__private::KernelFunction =
            #runtime::__private::KernelFunction::new(&#module, #name_str, #entry, #entry_1d, HOST_ENTRY, #runtime::crate_identity!())
                #with_2d #with_block;
    }
}

/// The instance's body as the CPU simulator calls it, with the PTX entry
/// point's calling convention (one pointer per PTX parameter), as a `const
/// HOST_ENTRY` item: one host function per entry point.
fn host_entry(
    kernel: &Kernel,
    instance: &super::model::Instance,
    shapes: &[EntryShape],
    block_shape: Option<&TokenStream>,
    paths: &KernelPaths,
) -> TokenStream {
    let runtime = &paths.runtime;
    let call = |shape, name| host_call(kernel, instance, shape, name, block_shape, paths);
    let general = call(EntryShape::General, "__host_entry");
    let one_dimensional = call(EntryShape::OneDimensional, "__host_entry_1d");
    let (z_extent_one, call_2d) = if shapes.contains(&EntryShape::ZExtentOne) {
        (
            call(EntryShape::ZExtentOne, "__host_entry_2d"),
            quote!(::core::option::Option::Some(__host_entry_2d)),
        )
    } else {
        (quote!(), quote!(::core::option::Option::None))
    };
    let params =
        super::device::entry_parts(kernel, instance, EntryShape::General, None, paths).params;
    let sizes = params
        .iter()
        .map(|(_, ty)| quote!(::core::mem::size_of::<#ty>()));
    quote! {
        #general
        #one_dimensional
        #z_extent_one
        const HOST_ENTRY: #runtime::__private::HostEntry = #runtime::__private::HostEntry {
            call: __host_entry,
            call_1d: __host_entry_1d,
            call_2d: #call_2d,
            param_sizes: &[#(#sizes),*],
        };
    }
}

/// One of the instance's entry points as a host function taking one pointer
/// per PTX parameter.
fn host_call(
    kernel: &Kernel,
    instance: &super::model::Instance,
    shape: EntryShape,
    name: &str,
    block_shape: Option<&TokenStream>,
    paths: &KernelPaths,
) -> TokenStream {
    let name = syn::Ident::new(name, proc_macro2::Span::call_site());
    let super::device::EntryParts {
        params,
        rebuild,
        call,
        ..
    } = super::device::entry_parts(kernel, instance, shape, block_shape, paths);
    let reads = params.iter().enumerate().map(|(slot, (name, ty))| {
        quote! {
            // SAFETY: slot `#slot` points to a live value of the parameter's type
            // (the caller's contract, as for the PTX entry point); the copy the
            // simulator made may be less aligned than the type.
            let #name: #ty = unsafe { ::core::ptr::read_unaligned((*__gpu_params.add(#slot)).cast::<#ty>()) };
        }
    });
    quote! {
        /// # Safety
        /// `params` holds one pointer per PTX parameter of the entry point,
        /// each to a live value of that parameter's type, and runs inside a
        /// simulated GPU thread.
        #[allow(non_snake_case, unused_unsafe, clippy::too_many_arguments)]
        unsafe fn #name(__gpu_params: *const *mut ::core::ffi::c_void) {
            #(#reads)*
            #(#rebuild)*
            super::#call
        }
    }
}

/// The launcher's parameter for the kernel's parameter `p` (`None` for
/// those built on the device); `runtime` as seen from the launcher module.
pub fn launcher_param(p: &Param, runtime: &syn::Path) -> Option<TokenStream> {
    let name = &p.name;
    Some(match &p.kind {
        ParamKind::Scalar(ty) | ParamKind::Value(ty) => quote!(#name: #ty),
        ParamKind::Input(elem) => quote!(#name: impl #runtime::DeviceInput<#elem>),
        ParamKind::Output(elem) | ParamKind::Atomic(elem) => {
            quote!(mut #name: impl #runtime::DeviceOutput<#elem>)
        }
        ParamKind::Output2d(elem, _, _) => quote!(mut #name: #runtime::DeviceView2dMut<'_, #elem>),
        ParamKind::Output3d(elem) => quote!(mut #name: #runtime::DeviceView3dMut<'_, #elem>),
        ParamKind::Block | ParamKind::DynamicShared(_) => return None,
    })
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
