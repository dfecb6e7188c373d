//! `#[kernel]`: parse the attribute and the function into a
//! [`model::Kernel`] (each parameter kind described once in [`kinds`]),
//! then emit the device entry points ([`device`]), the host launcher
//! ([`host`]), the simulator's host entries ([`host_entry`]) and the
//! interface description both targets compile ([`interface`]). A kernel
//! with errors gets every error at once, each at its own span, and the
//! fallback items of [`fallback`].

mod attribute;
mod device;
mod fallback;
mod host;
mod host_entry;
mod interface;
mod kinds;
mod model;
mod params;
mod substitute;

use proc_macro2::TokenStream;
use quote::quote;

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    match model::Kernel::parse(args, item.clone()) {
        Ok(kernel) => {
            let device = device::emit(&kernel);
            let interface = interface::emit(&kernel);
            let host = host::emit(&kernel);
            quote! {
                #host
                #device
                #interface
            }
        }
        Err(failure) => fallback::emit(failure, item),
    }
}

#[cfg(test)]
mod tests;
