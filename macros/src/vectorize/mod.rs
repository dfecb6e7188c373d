//! `#[vectorize]`: Numba's `@vectorize(target='cuda')` and `@cuda.reduce`.
//! Parse the scalar function into a [`model::Vectorized`], then emit it
//! unchanged beside a module of its name holding a `#[kernel]` (so the
//! kernel lands in the crate's PTX like any other) and its launchers
//! ([`emit`]). On errors, the function alone is emitted with them, so the
//! rest of the crate still sees it.

mod emit;
mod model;

use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    match model::Vectorized::parse(args, item.clone()) {
        Ok(model) => emit::emit(&model),
        Err(error) => {
            let error = error.into_compile_error();
            quote!(#item #error)
        }
    }
}
