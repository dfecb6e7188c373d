//! `tma_tile!(T, ROWS, COLS[, S])` and `tma_tile!(T, BoxNd<...>[, S])`: a
//! tile of the block's static shared
//! memory that bulk tensor copies fill, 1024-byte aligned, with its own
//! `mbarrier`s, each under a symbol of its own, as `mbarriers!` places its
//! barriers: both are reached only through the handle it gives
//! (`gpu_device::tma::TmaTileSlot<T, ROWS, COLS, S>`, or for a box of any
//! rank `gpu_device::tma::TmaTileSlotNd<T, B, S>`).

use crate::shared::next_symbol;
use proc_macro2::TokenStream;
use quote::quote;
use syn::punctuated::Punctuated;
use syn::{GenericArgument, PathArguments, Token, Type};

const FORM: &str = "write `tma_tile!(T, ROWS, COLS)` or `tma_tile!(T, ROWS, COLS, Swizzle)`: a box of ROWS x COLS elements of T (`tma_tile!(bf16, 64, 64, Swizzle128B)`), or `tma_tile!(T, Box3d<D, R, C>)` (`Box1d` to `Box5d`, extents outermost first) with an optional swizzle";

/// Whether `arg` names a box shape, `Box3d<2, 8, 16>` (a path whose last
/// segment has generic arguments), not an extent (a literal or a const).
fn is_box_shape(arg: &GenericArgument) -> bool {
    match arg {
        GenericArgument::Type(Type::Path(p)) => p
            .path
            .segments
            .last()
            .is_some_and(|s| matches!(s.arguments, PathArguments::AngleBracketed(_))),
        _ => false,
    }
}

pub fn expand(input: TokenStream) -> syn::Result<TokenStream> {
    let parser = Punctuated::<GenericArgument, Token![,]>::parse_terminated;
    let args = syn::parse::Parser::parse2(parser, input.clone())
        .map_err(|e| syn::Error::new(e.span(), FORM))?;
    let shaped = args.len() >= 2 && is_box_shape(&args[1]);
    let slot = if shaped && (2..=3).contains(&args.len()) {
        let args: Vec<&GenericArgument> = args.iter().collect();
        quote!(::gpu_device::tma::TmaTileSlotNd<#(#args),*>)
    } else if !shaped && (3..=4).contains(&args.len()) {
        let args: Vec<&GenericArgument> = args.iter().collect();
        quote!(::gpu_device::tma::TmaTileSlot<#(#args),*>)
    } else {
        return Err(syn::Error::new_spanned(input, FORM));
    };
    let tile_symbol = next_symbol();
    let barrier_symbol = next_symbol();
    Ok(quote! {{
        #[cfg(target_arch = "nvptx64")]
        let (__gpu_tile, __gpu_barrier): (*mut ::gpu_device::tma::TileBlock, *mut u64) = {
            #[unsafe(export_name = #tile_symbol)]
            static TILE: ::gpu_device::__private::SharedStorage<
                ::gpu_device::tma::TileBlock,
                { <#slot>::BLOCKS },
            > = ::gpu_device::__private::SharedStorage::uninit();
            #[unsafe(export_name = #barrier_symbol)]
            static BARRIER: ::gpu_device::__private::SharedStorage<
                u64,
                { ::gpu_device::tma::__TILE_WORDS },
            > = ::gpu_device::__private::SharedStorage::uninit();
            (TILE.as_ptr(), BARRIER.as_ptr())
        };
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: this invocation's own symbols, element types and lengths.
        let (__gpu_tile, __gpu_barrier): (*mut ::gpu_device::tma::TileBlock, *mut u64) = unsafe {
            (
                ::gpu_device::__private::static_shared::<::gpu_device::tma::TileBlock>(
                    #tile_symbol,
                    <#slot>::BLOCKS,
                ),
                ::gpu_device::__private::static_shared::<u64>(
                    #barrier_symbol,
                    ::gpu_device::tma::__TILE_WORDS,
                ),
            )
        };
        #[allow(unused_unsafe)]
        // SAFETY: this invocation's own tile blocks and barriers' words in
        // the block's shared memory, which nothing else names.
        unsafe { <#slot>::from_raw(__gpu_tile, __gpu_barrier) }
    }})
}

#[cfg(test)]
mod tests {
    use quote::quote;

    #[test]
    fn each_invocation_has_its_own_symbols() {
        let a = super::expand(quote!(f32, 64, 64)).unwrap().to_string();
        let b = super::expand(quote!(bf16, 64, 64, Swizzle128B))
            .unwrap()
            .to_string();
        assert!(a.contains("TmaTileSlot < f32 , 64 , 64 >"), "{a}");
        assert!(b.contains("Swizzle128B"), "{b}");
        assert_ne!(a, b);
        let c = super::expand(quote!(f32, Box3d<2, 8, 16>))
            .unwrap()
            .to_string();
        assert!(
            c.contains("TmaTileSlotNd < f32 , Box3d < 2 , 8 , 16 > >"),
            "{c}"
        );
        let d = super::expand(quote!(f32, BOX, BOX)).unwrap().to_string();
        assert!(d.contains("TmaTileSlot < f32 , BOX , BOX >"), "{d}");
    }

    #[test]
    fn a_wrong_form_is_an_error_naming_it() {
        for input in [
            quote!(),
            quote!(f32, 64),
            quote!(f32, Box1d<16>, NoSwizzle, 4),
        ] {
            let e = super::expand(input).unwrap_err().to_string();
            assert!(e.contains("tma_tile!(T, ROWS, COLS)"), "{e}");
        }
    }
}
