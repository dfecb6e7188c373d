//! Device side: the body as a private function (type-checked on the host
//! too), and two `ptx-kernel` entry points per instance that rebuild slices
//! from the pointers and lengths the launcher passed.
//!
//! The two entry points differ in `thread_index()`: the general one computes
//! the thread's row-major position for any launch shape; the `__1d` one, which
//! the runtime launches only when the grid and the block are one-dimensional,
//! takes the shorter formula without testing the shape on the device. The body
//! is generic over which one it is, and binds the name `thread_index` to the
//! matching function at its top, shadowing the imported one.

use super::model::{Instance, Kernel, ParamKind};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;
use syn::{Ident, Type};

pub fn emit(kernel: &Kernel) -> TokenStream {
    let body_name = body_name(&kernel.name);
    let mut body = kernel.function.clone();
    body.sig.ident = body_name.clone();
    body.vis = syn::Visibility::Inherited;
    body.attrs.retain(|a| !a.path().is_ident("doc"));
    body.sig
        .generics
        .params
        .push(syn::parse_quote!(const __GPU_ONE_DIMENSIONAL: bool));
    let user_block = &body.block;
    body.block = syn::parse_quote!({
        // Calls of `thread_index()` in the body resolve to this binding: the
        // shape-specific witness (see the module documentation).
        #[allow(unused_variables)]
        let thread_index = ::gpu_device::__private::thread_index_for_shape::<__GPU_ONE_DIMENSIONAL>;
        #user_block
    });
    let entries = kernel
        .instances
        .iter()
        .flat_map(|i| [entry(kernel, i, false), entry(kernel, i, true)]);
    quote! {
        // The body is compiled on the host too, so that it type-checks there;
        // only the device calls it.
        #[cfg_attr(not(target_arch = "nvptx64"), allow(dead_code))]
        #[inline(always)]
        #[allow(clippy::too_many_arguments)]
        #body

        #(#entries)*
    }
}

pub fn body_name(name: &Ident) -> Ident {
    format_ident!("__gpu_kernel_body_{}", name)
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

pub fn entry_parts(kernel: &Kernel, instance: &Instance, one_dimensional: bool) -> EntryParts {
    let body_name = body_name(&kernel.name);
    let substitute = |ty: &Type| -> Type {
        let mut ty = ty.clone();
        if let (Some(param), Some(with)) = (&kernel.type_param, &instance.ty) {
            Substitute { param, with }.visit_type_mut(&mut ty);
        }
        ty
    };
    let mut params: Vec<(Ident, Type)> = Vec::new();
    let mut rebuild = Vec::new();
    let mut call_args = Vec::new();
    for p in &kernel.params {
        let name = &p.name;
        let ptr = format_ident!("{}__ptr", name);
        let len = format_ident!("{}__len", name);
        match &p.kind {
            ParamKind::Scalar(ty) | ParamKind::Value(ty) => {
                params.push((name.clone(), substitute(ty)));
            }
            ParamKind::Input(elem) => {
                let elem = substitute(elem);
                params.push((ptr.clone(), syn::parse_quote!(*const #elem)));
                params.push((len.clone(), syn::parse_quote!(usize)));
                rebuild.push(quote! {
                    // SAFETY: the launcher passed a live device allocation of `len`
                    // elements that no argument of this launch writes.
                    let #name: &[#elem] = unsafe { ::gpu_device::__private::slice_from_kernel_param(#ptr, #len) };
                });
            }
            ParamKind::Output(elem) => {
                let elem = substitute(elem);
                params.push((ptr.clone(), syn::parse_quote!(*mut #elem)));
                params.push((len.clone(), syn::parse_quote!(usize)));
                rebuild.push(quote! {
                    // SAFETY: the launcher passed a live device allocation of `len`
                    // elements, borrowed mutably for this launch alone; every thread
                    // receives the same one.
                    let #name = unsafe { ::gpu_device::DisjointSlice::<#elem>::from_raw_parts(#ptr, #len) };
                });
            }
            ParamKind::Atomic(elem) => {
                let elem = substitute(elem);
                params.push((ptr.clone(), syn::parse_quote!(*const #elem)));
                params.push((len.clone(), syn::parse_quote!(usize)));
                rebuild.push(quote! {
                    // SAFETY: as for outputs; `DeviceAtomic<T>` is `repr(transparent)`
                    // over `T` and accessed only with atomic instructions.
                    let #name: &[::gpu_device::DeviceAtomic<#elem>] = unsafe {
                        ::gpu_device::__private::slice_from_kernel_param(#ptr.cast::<::gpu_device::DeviceAtomic<#elem>>(), #len)
                    };
                });
            }
        }
        call_args.push(quote!(#name));
    }
    let turbofish = match &instance.ty {
        Some(ty) => quote!(::<#ty, #one_dimensional>),
        None => quote!(::<#one_dimensional>),
    };
    EntryParts {
        params,
        rebuild,
        call: quote!(#body_name #turbofish(#(#call_args),*)),
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
    } = entry_parts(kernel, instance, one_dimensional);
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

/// Replaces the kernel's type parameter by an instance type.
struct Substitute<'a> {
    param: &'a Ident,
    with: &'a Type,
}

impl VisitMut for Substitute<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if let Type::Path(p) = ty {
            if p.qself.is_none() && p.path.is_ident(self.param) {
                *ty = self.with.clone();
                return;
            }
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}
