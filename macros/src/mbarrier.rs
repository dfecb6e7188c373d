//! `mbarriers!(N)`: `N` hardware barriers (`mbarrier`) in the block's static
//! shared memory, under a symbol of their own, as `shared_array!` places its
//! arrays: the barriers' words are reached only through the handle it
//! gives (`gpu_device::mbarrier::MBarriers<N>`), never as plain memory.

use crate::shared::next_symbol;
use proc_macro2::TokenStream;
use quote::quote;
use syn::Expr;

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let count: Expr = syn::parse2(input).map_err(|e| {
        syn::Error::new(
            e.span(),
            "write `mbarriers!(N)`: N barriers, N a constant (`mbarriers!(2)`)",
        )
    })?;
    let symbol = next_symbol();
    Ok(quote! {{
        #[cfg(target_arch = "nvptx64")]
        let __gpu_mbarriers: *mut u64 = {
            // 8-byte words, 8-byte aligned, as `mbarrier` needs: the
            // barriers', then their tag of the block they are live in.
            #[unsafe(export_name = #symbol)]
            static STORAGE: ::gpu_device::__private::SharedStorage<
                u64,
                { ::gpu_device::mbarrier::__words(#count) },
            > = ::gpu_device::__private::SharedStorage::uninit();
            STORAGE.as_ptr()
        };
        // The simulator keeps more state per barrier than the GPU's word.
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: this invocation's own symbol, element type and length.
        let __gpu_mbarriers: *mut u64 = unsafe {
            ::gpu_device::__private::static_shared::<u64>(
                #symbol,
                ::gpu_device::mbarrier::__words(#count),
            )
        };
        #[allow(unused_unsafe)]
        // SAFETY: `__gpu_mbarriers` addresses this invocation's own words
        // in the block's shared memory, which nothing else names.
        unsafe { ::gpu_device::mbarrier::MBarriers::<{ #count }>::from_raw(__gpu_mbarriers) }
    }})
}

#[cfg(test)]
mod tests {
    use quote::quote;

    #[test]
    fn each_invocation_has_its_own_symbol() {
        let a = super::expand(quote!(2)).unwrap().to_string();
        let b = super::expand(quote!(2)).unwrap().to_string();
        assert!(a.contains("__gpu_shared_"), "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn a_missing_count_is_an_error_naming_the_form() {
        let e = super::expand(quote!()).unwrap_err().to_string();
        assert!(e.contains("mbarriers!(N)"), "{e}");
    }
}
