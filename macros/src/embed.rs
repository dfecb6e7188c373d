//! `embed_kernels!()`: the crate's PTX as a static the launchers load from.
//! `embed_kernels!(unsafe(runtime_crate = "path"))` names `gpu_runtime` by
//! another path (`unsafe`: see [`crate::path_option`]).

use crate::errors::Errors;
use crate::path_option::{Key, PathOptions};
use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{ParseStream, Parser};
use syn::Token;

const EXPECTED: &str = "`unsafe(runtime_crate = \"path\")` (the path to the `gpu_runtime` crate), the only option of embed_kernels!: the PTX comes from this crate's build.rs";

const KEYS: &[Key] = &[Key::naming_crate(
    "runtime_crate",
    "my_gpu::runtime",
    "gpu_runtime",
)];

/// The static, or the errors and a stand-in static of the same name and
/// type (with no PTX), so that the crate's launchers, which name it, add no
/// error of their own.
pub fn expand(input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let mut options = PathOptions::new(KEYS, EXPECTED);
    let parser = |input: ParseStream| -> syn::Result<()> {
        while !input.is_empty() {
            if !PathOptions::starts_option(input) {
                return Err(input.error(format!("expected {EXPECTED}")));
            }
            options.parse_one(input, &mut errors)?;
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(input) {
        errors.push(e);
    }
    // Cargo tells the compiler, and so this macro, which target it builds.
    let target = std::env::var("CARGO_BIN_NAME").ok();
    let test_or_bench = std::env::var_os("CARGO_TARGET_TMPDIR").is_some();
    if let Some(why) = outside_the_library(target.as_deref(), test_or_bench) {
        errors.push(syn::Error::new(proc_macro2::Span::call_site(), why));
    }
    let runtime = options
        .get("runtime_crate")
        .cloned()
        .unwrap_or_else(|| syn::parse_quote!(::gpu_runtime));
    if let Err(errors) = errors.finish() {
        let errors = errors.into_compile_error();
        return quote! {
            #errors
            #[cfg(not(target_arch = "nvptx64"))]
            #[allow(dead_code)]
            // SAFETY: never loaded: the errors above stop this crate's build.
            pub static KERNEL_MODULE: #runtime::EmbeddedModule =
                unsafe { #runtime::EmbeddedModule::new(::core::env!("CARGO_PKG_NAME"), "") };
        };
    }
    quote! {
        /// The PTX module holding this crate's kernels, built by `build.rs`.
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the PTX is the file this crate's build script wrote with
        // `gpu_builder` from this crate's own `#[kernel]` functions, whose
        // launchers are the ones that load it: `of_crate` keeps other
        // crates' launchers out.
        pub static KERNEL_MODULE: #runtime::EmbeddedModule = unsafe {
            #runtime::EmbeddedModule::of_crate(
                #runtime::crate_identity!(),
                ::core::env!("CARGO_PKG_NAME"),
                ::core::include_str!(::core::concat!(::core::env!("OUT_DIR"), "/kernels.ptx")),
            )
        };
    }
}

/// Why `embed_kernels!` cannot be in the crate being compiled, a binary
/// (or binary example) `bin`, or an integration test or benchmark: `None`
/// for the package's library. `gpu_builder` builds the PTX from the
/// library (`cargo build --lib`), and `OUT_DIR` is the package's, so
/// elsewhere the module would hold the library's entry points under this
/// crate's launchers: a kernel here named like one there, with other
/// parameters of the same sizes, would run it on arguments it misreads.
fn outside_the_library(bin: Option<&str>, test_or_bench: bool) -> Option<String> {
    let target = match (bin, test_or_bench) {
        (Some(bin), _) => format!("the binary `{bin}`"),
        (None, true) => "an integration test or benchmark".to_string(),
        (None, false) => return None,
    };
    Some(format!(
        "embed_kernels!() belongs in its package's library (src/lib.rs), not in {target}: build.rs builds the PTX from the library's kernels, so here it would serve the library's entry points to this crate's launchers; launch the library's kernels through the library's launchers"
    ))
}

#[cfg(test)]
mod tests {
    use super::{expand, outside_the_library};

    #[test]
    fn only_a_library_embeds_its_kernels() {
        assert_eq!(outside_the_library(None, false), None);
        let bin = outside_the_library(Some("app"), false).expect("a binary");
        assert!(bin.contains("not in the binary `app`"), "{bin}");
        let test = outside_the_library(None, true).expect("a test");
        assert!(
            test.contains("not in an integration test or benchmark"),
            "{test}"
        );
    }
    use quote::quote;

    #[test]
    fn the_runtime_path_can_be_overridden() {
        let default = expand(quote!()).to_string();
        assert!(
            default.contains("KERNEL_MODULE : :: gpu_runtime :: EmbeddedModule"),
            "{default}"
        );
        // The module serves the launchers of the crate it expands in alone.
        assert!(
            default.contains(
                ":: gpu_runtime :: EmbeddedModule :: of_crate (:: gpu_runtime :: crate_identity ! ()"
            ),
            "{default}"
        );
        let renamed = expand(quote!(unsafe(runtime_crate = "rt"))).to_string();
        assert!(
            renamed.contains("KERNEL_MODULE : rt :: EmbeddedModule"),
            "{renamed}"
        );
        assert!(!renamed.contains("gpu_runtime"), "{renamed}");
    }

    #[test]
    fn anything_else_is_an_error() {
        for (input, message) in [
            (quote!(foo), "expected `unsafe(runtime_crate"),
            (quote!(unsafe(crate = "rt")), "unknown option `crate`"),
            (quote!(unsafe(runtime_crate = rt)), "string literal"),
            (
                quote!(unsafe(runtime_crate = "a"), unsafe(runtime_crate = "b")),
                "given twice",
            ),
            (
                quote!(runtime_crate = "rt"),
                "write `unsafe(runtime_crate = \\\"rt\\\")`",
            ),
        ] {
            let out = expand(input.clone()).to_string();
            assert!(out.contains("compile_error"), "{input}: {out}");
            assert!(out.contains(message), "{input}: {out}");
            // The stand-in static, with no PTX.
            assert!(
                out.contains(
                    "EmbeddedModule :: new (:: core :: env ! (\"CARGO_PKG_NAME\") , \"\")"
                ),
                "{out}"
            );
        }
    }
}
