//! The emitted items: the function unchanged, and `mod <name>` with the
//! `#[kernel]` and its launchers.
//!
//! The kernel is `<name>_elementwise` (or `<name>_reduce`): its name is
//! its PTX entry point, unique in the crate as the function's name is in
//! its module. It calls the function as `super::<name>`, so the body is
//! the user's own code on both targets. The launchers are host-only
//! functions of the module: `launch`/`apply` (element-wise) or
//! `reduce_into`/`reduce`.

use super::model::{Form, Vectorized};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

pub fn emit(model: &Vectorized) -> TokenStream {
    let function = &model.function;
    let items = match model.form {
        Form::Elementwise => elementwise(model),
        Form::Reduce => reduce(model),
    };
    let name = &model.name;
    let vis = &model.vis;
    let doc = match model.form {
        Form::Elementwise => format!(
            "The element-wise kernel of [`{name}`](fn@{name}) (`#[vectorize]`) and its launchers: `{name}::launch(inputs.., &mut out, &stream)` writes `out[i] = {name}(inputs[i]..)`; `{name}::apply(inputs.., &stream)` returns a new buffer."
        ),
        Form::Reduce => format!(
            "The reduction with [`{name}`](fn@{name}) (`#[vectorize(reduce)]`, as Numba's `@cuda.reduce`): `{name}::reduce(&input, &stream)` returns the value, `{name}::reduce_into(&input, &mut out, &stream)` queues it into a one-element buffer."
        ),
    };
    quote! {
        #function

        #[doc = #doc]
        #[allow(non_snake_case)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            #items
        }
    }
}

/// The output parameter's name: `out`, or a name no argument has.
fn output_name(model: &Vectorized) -> Ident {
    let mut name = String::from("out");
    while model.args.iter().any(|a| a.name == name) {
        name.push('_');
    }
    Ident::new(&name, Span::call_site())
}

fn elementwise(model: &Vectorized) -> TokenStream {
    let name = &model.name;
    let name_str = name.to_string();
    let kernel = format_ident!("{}_elementwise", name);
    let out = output_name(model);
    let out_str = out.to_string();
    let names: Vec<&Ident> = model.args.iter().map(|a| &a.name).collect();
    let name_strs: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let ret = &model.ret;
    let index = Ident::new("__gpu_i", Span::mixed_site());
    let element = Ident::new("__gpu_element", Span::mixed_site());
    let k = Ident::new("__gpu_k", Span::mixed_site());
    let len = Ident::new("__gpu_len", Span::mixed_site());
    let result = Ident::new("__gpu_result", Span::mixed_site());
    // Names an argument may also have (`stream: f32`): the generated ones are
    // mixed-site, out of the user's reach.
    let stream = Ident::new("stream", Span::mixed_site());
    let grid = Ident::new("grid", Span::mixed_site());
    let block = Ident::new("block", Span::mixed_site());
    let first = names[0];
    let first_len =
        quote_spanned!(model.args[0].ty.span()=> ::gpu_runtime::DeviceInput::raw_view(&#first).len);
    // Everything that names an argument's type is spanned on that type, so
    // that a type that is not `DeviceCopy` is reported there.
    let spanned = |f: &dyn Fn(&Ident, &syn::Type) -> TokenStream| -> Vec<TokenStream> {
        model.args.iter().map(|a| f(&a.name, &a.ty)).collect()
    };
    let kernel_params = spanned(&|n, t| quote_spanned!(t.span()=> #n: &[#t]));
    let launcher_params =
        spanned(&|n, t| quote_spanned!(t.span()=> #n: impl ::gpu_runtime::DeviceInput<#t>));
    let reads = spanned(&|n, t| quote_spanned!(t.span()=> #n[#k]));
    let lengths = spanned(&|n, t| {
        let s = n.to_string();
        quote_spanned!(t.span()=> (#s, ::gpu_runtime::DeviceInput::raw_view(&#n).len))
    });
    let kernel_doc = format!(
        "`{out_str}[i] = {name_str}({}[i])` for every `i`: the kernel of `#[vectorize]`, one thread per element (launch it through [`launch`] or [`apply`]).",
        name_strs.join("[i], ")
    );
    let launch_doc = format!(
        "Queues `{out_str}[i] = {name_str}({}[i])` for every element on `stream` (Numba's `{name_str}(.., out=out, stream=stream)`): one thread per element, in blocks of 256. The arguments and `{out_str}` are device buffers or views of one length; a length that differs is an error naming it. Returns once queued.",
        name_strs.join("[i], ")
    );
    let apply_doc = format!(
        "`{name_str}` of every element, into a new buffer of the arguments' length, queued on `stream` (Numba's `{name_str}(..., stream=stream)` returning a device array)."
    );
    quote! {
        #[doc = #kernel_doc]
        #[::gpu_device::kernel(#(len(#names >= #out)),*)]
        pub fn #kernel(#(#kernel_params,)* mut #out: ::gpu_device::DisjointSlice<#ret>) {
            let #index = thread_index();
            if let ::core::option::Option::Some(#element) = #out.get_mut(#index) {
                let #k = #index.get();
                *#element = super::#name(#(#reads),*);
            }
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #launch_doc]
        #[allow(clippy::too_many_arguments)]
        pub fn launch(
            #(#launcher_params,)*
            mut #out: impl ::gpu_runtime::DeviceOutput<#ret>,
            #stream: &::gpu_runtime::Stream,
        ) -> ::gpu_runtime::Result<()> {
            let #len = ::gpu_runtime::__private::elementwise_len(#name_str, &[
                #(#lengths,)*
                (#out_str, ::gpu_runtime::DeviceOutput::raw_view(&mut #out).len),
            ])?;
            if #len == 0 {
                return ::core::result::Result::Ok(());
            }
            let (#grid, #block) = ::gpu_runtime::__private::elementwise_shape(#len);
            ::gpu_runtime::launch!(#kernel[#grid, #block, #stream](#(#names,)* #out))
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #apply_doc]
        #[allow(clippy::too_many_arguments)]
        pub fn apply(
            #(#launcher_params,)*
            #stream: &::gpu_runtime::Stream,
        ) -> ::gpu_runtime::Result<::gpu_runtime::DeviceBuffer<#ret>> {
            let #len = #first_len;
            let mut #result = ::gpu_runtime::DeviceBuffer::<#ret>::zeroed_on(#len, #stream)?;
            self::launch(#(#names,)* &mut #result, #stream)?;
            ::core::result::Result::Ok(#result)
        }
    }
}

fn reduce(model: &Vectorized) -> TokenStream {
    let name = &model.name;
    let name_str = name.to_string();
    let kernel = format_ident!("{}_reduce", name);
    let ty = &model.ret;
    let len = Ident::new("__gpu_len", Span::mixed_site());
    let partials = Ident::new("__gpu_partials", Span::mixed_site());
    let result = Ident::new("__gpu_result", Span::mixed_site());
    // Spanned on the type: a type a block cannot reduce is reported there.
    let pass = quote_spanned!(ty.span()=> ::gpu_device::vectorize::reduce_pass::<#ty>(input, partials, block, super::#name));
    let kernel_doc = format!(
        "One pass of the reduction with `{name_str}`: block `b` writes `{name_str}` over its share of `input` to `partials[b]` (launch it through [`reduce`] or [`reduce_into`])."
    );
    let reduce_into_doc = format!(
        "Queues the reduction of `input` with `{name_str}` on `stream`, into `out`'s one element (Numba's `reduce(a, res=out, stream=stream)`): two passes, the first over the input, the second of one block over the first's partials. `{name_str}` must be associative and commutative: the order of the combinations is the device's. An empty input or an `out` that is not one element is an error."
    );
    let reduce_doc = format!(
        "The reduction of `input` with `{name_str}` on `stream`, waited for (Numba's `reduce(a, stream=stream)`); see [`reduce_into`]."
    );
    quote! {
        #[doc = #kernel_doc]
        #[::gpu_device::kernel]
        pub fn #kernel(input: &[#ty], partials: ::gpu_device::DisjointSlice<#ty>, block: ::gpu_device::Block) {
            #pass
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #reduce_into_doc]
        pub fn reduce_into(
            input: impl ::gpu_runtime::DeviceInput<#ty>,
            mut out: impl ::gpu_runtime::DeviceOutput<#ty>,
            stream: &::gpu_runtime::Stream,
        ) -> ::gpu_runtime::Result<()> {
            let #len = ::gpu_runtime::DeviceInput::raw_view(&input).len;
            ::gpu_runtime::__private::check_reduce_output(
                #name_str,
                ::gpu_runtime::DeviceOutput::raw_view(&mut out).len,
            )?;
            let ((blocks, threads), final_threads) =
                ::gpu_runtime::__private::reduce_shape(#name_str, #len, stream)?;
            let mut #partials = ::gpu_runtime::DeviceBuffer::<#ty>::zeroed_on(blocks, stream)?;
            ::gpu_runtime::launch!(#kernel[blocks, threads, stream](input, &mut #partials))?;
            ::gpu_runtime::launch!(#kernel[1, final_threads, stream](&#partials, out))
        }

        #[cfg(not(target_arch = "nvptx64"))]
        #[doc = #reduce_doc]
        pub fn reduce(
            input: impl ::gpu_runtime::DeviceInput<#ty>,
            stream: &::gpu_runtime::Stream,
        ) -> ::gpu_runtime::Result<#ty> {
            let mut #result = ::gpu_runtime::DeviceBuffer::<#ty>::zeroed_on(1, stream)?;
            reduce_into(input, &mut #result, stream)?;
            ::core::result::Result::Ok(#result.copy_to_host_sync(stream)?[0])
        }
    }
}
