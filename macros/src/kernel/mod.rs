//! `#[kernel]`: parse the function into a [`model::Kernel`], then emit the
//! device entry points ([`device`]) and the host launcher ([`host`]).

mod device;
mod host;
mod model;

use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let kernel = model::Kernel::parse(args, item)?;
    let device = device::emit(&kernel);
    let host = host::emit(&kernel);
    Ok(quote! {
        #device
        #host
    })
}
