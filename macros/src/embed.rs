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
    expand_in(
        input,
        std::env::var_os("OUT_DIR").map(std::path::PathBuf::from),
    )
}

/// [`expand`], with the package's build output directory `out_dir`.
fn expand_in(input: TokenStream, out_dir: Option<std::path::PathBuf>) -> TokenStream {
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
    // In place of the module where an error stops the build: the launchers,
    // which name it, add no error of their own.
    let stand_in = quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(dead_code)]
        // SAFETY: never loaded: the errors beside it stop this crate's build.
        pub static KERNEL_MODULE: #runtime::EmbeddedModule =
            unsafe { #runtime::EmbeddedModule::new(::core::env!("CARGO_PKG_NAME"), "") };
    };
    if let Err(errors) = errors.finish() {
        let errors = errors.into_compile_error();
        return quote! {
            #errors
            #stand_in
        };
    }
    // What the build script wrote matters to the host compile alone (the
    // device build of the same crate runs the build script too, which then
    // writes nothing): its errors are cfg'd to the host.
    let reported = match built_ptx(out_dir) {
        Built::Ptx | Built::NotBuilt(NotBuilt::Documentation, _) => quote!(),
        Built::Missing(message) | Built::NotBuilt(NotBuilt::DeviceOnly, message) => {
            return quote! {
                #[cfg(not(target_arch = "nvptx64"))]
                ::core::compile_error! { #message }
                #stand_in
            };
        }
        Built::NotBuilt(NotBuilt::HostReports, message) => reported_unless_the_host_fails(&message),
    };
    quote! {
        #reported
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

/// What `gpu_builder` wrote (its `not_built` module describes the file;
/// the keywords here are checked against it by the workspace's tests).
#[derive(Debug, PartialEq, Eq)]
enum Built {
    /// PTX.
    Ptx,
    /// No file: why, and the fix.
    Missing(String),
    /// The stand-in for a module not built: why, and the message.
    NotBuilt(NotBuilt, String),
}

#[derive(Debug, PartialEq, Eq)]
enum NotBuilt {
    Documentation,
    HostReports,
    DeviceOnly,
}

const NOT_BUILT_MARKER: &str = "// gpu-builder: not built";

const BUILD_RS: &str = "fn main() { if let Err(e) = gpu_builder::PtxBuilder::this_crate().build() { eprintln!(\"{e}\"); std::process::exit(1); } }";

/// Reads `$OUT_DIR/kernels.ptx` (`out_dir`: cargo sets `OUT_DIR` for a
/// package with a build script).
fn built_ptx(out_dir: Option<std::path::PathBuf>) -> Built {
    let Some(out_dir) = out_dir else {
        return Built::Missing(format!(
            "embed_kernels!() embeds the PTX that the package's build.rs builds, and this package has no build.rs \
             (so no OUT_DIR): add build.rs beside Cargo.toml,\n    {BUILD_RS}\nand gpu-builder under [build-dependencies]"
        ));
    };
    let ptx = out_dir.join("kernels.ptx");
    let text = match std::fs::read_to_string(&ptx) {
        Ok(text) => text,
        Err(_) => {
            return Built::Missing(format!(
                "embed_kernels!() embeds the PTX that the package's build.rs builds, and it built none ({} is missing): \
                 build.rs should call gpu_builder,\n    {BUILD_RS}",
                ptx.display()
            ))
        }
    };
    let mut lines = text.lines();
    let Some(keyword) = lines
        .next()
        .and_then(|l| l.strip_prefix(NOT_BUILT_MARKER))
        .map(|rest| {
            rest.trim()
                .trim_start_matches('(')
                .trim_end_matches(')')
                .to_string()
        })
    else {
        return Built::Ptx;
    };
    let message: Vec<&str> = lines
        .map(|l| l.strip_prefix("// ").unwrap_or(l.trim_start_matches("//")))
        .collect();
    let message = message.join("\n");
    match keyword.as_str() {
        "documentation" => Built::NotBuilt(NotBuilt::Documentation, message),
        "host-reports" => Built::NotBuilt(NotBuilt::HostReports, message),
        "device-only" => Built::NotBuilt(NotBuilt::DeviceOnly, message),
        other => Built::Missing(format!(
            "{} says the kernels were not built, for a reason this gpu-macros does not know (`{other}`): \
             gpu-builder and gpu-device are of different versions?\n{message}",
            ptx.display()
        )),
    }
}

/// An error that rustc reports only where the crate has no other error:
/// the device build failed on errors in the crate's own code, which the host
/// compile reports itself (with spans) unless that code is compiled for the
/// device alone. `unused_must_use` is a late lint, which rustc runs only
/// once type checking and borrow checking found no error; denied here, it
/// fails the build then.
fn reported_unless_the_host_fails(message: &str) -> TokenStream {
    let note =
        format!("the device (nvptx64-nvidia-cuda) build of this crate's kernels failed; {message}");
    quote! {
        #[cfg(not(target_arch = "nvptx64"))]
        const _: () = {
            #[must_use = #note]
            struct DeviceBuildFailed;
            #[deny(unused_must_use)]
            #[allow(dead_code, path_statements)]
            fn report() {
                DeviceBuildFailed;
            }
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
    use super::{built_ptx, expand_in, outside_the_library, Built, NotBuilt};
    use std::path::PathBuf;

    /// A build output directory holding `kernels.ptx` with `text`.
    fn out_dir(name: &str, text: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("gpu-macros-embed-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("kernels.ptx"), text).unwrap();
        dir
    }

    fn expand(input: proc_macro2::TokenStream) -> proc_macro2::TokenStream {
        expand_in(input, Some(out_dir("built", ".version 6.3\n")))
    }

    #[test]
    fn what_the_build_script_wrote_is_read() {
        let missing = built_ptx(None);
        assert!(
            matches!(&missing, Built::Missing(m) if m.contains("has no build.rs") && m.contains("[build-dependencies]")),
            "{missing:?}"
        );
        let empty =
            std::env::temp_dir().join(format!("gpu-macros-embed-{}-none", std::process::id()));
        std::fs::create_dir_all(&empty).unwrap();
        let none = built_ptx(Some(empty));
        assert!(
            matches!(&none, Built::Missing(m) if m.contains("it built none") && m.contains("PtxBuilder::this_crate()")),
            "{none:?}"
        );
        assert_eq!(
            built_ptx(Some(out_dir("ptx", ".version 6.3\n.target sm_70\n"))),
            Built::Ptx
        );
        for (keyword, kind) in [
            ("documentation", NotBuilt::Documentation),
            ("host-reports", NotBuilt::HostReports),
            ("device-only", NotBuilt::DeviceOnly),
        ] {
            let text =
                format!("// gpu-builder: not built ({keyword})\n// line one\n// \n// line three\n");
            assert_eq!(
                built_ptx(Some(out_dir(keyword, &text))),
                Built::NotBuilt(kind, "line one\n\nline three".into())
            );
        }
    }

    #[test]
    fn a_device_only_failure_is_a_compile_error_and_the_others_a_late_lint() {
        let device_only = expand_in(
            quote!(),
            Some(out_dir(
                "device-only-expand",
                "// gpu-builder: not built (device-only)\n// move `rand`\n",
            )),
        )
        .to_string();
        assert!(
            device_only.contains("compile_error ! { \"move `rand`\" }"),
            "{device_only}"
        );
        assert!(
            device_only
                .contains("# [cfg (not (target_arch = \"nvptx64\"))] :: core :: compile_error"),
            "the host compile alone reports it: {device_only}"
        );
        let host = expand_in(
            quote!(),
            Some(out_dir(
                "host-expand",
                "// gpu-builder: not built (host-reports)\n// error[E0308]\n",
            )),
        )
        .to_string();
        assert!(!host.contains("compile_error"), "{host}");
        assert!(host.contains("must_use"), "{host}");
        assert!(host.contains("deny (unused_must_use)"), "{host}");
        assert!(host.contains("error[E0308]"), "{host}");
        let docs = expand_in(
            quote!(),
            Some(out_dir(
                "docs-expand",
                "// gpu-builder: not built (documentation)\n// docs\n",
            )),
        )
        .to_string();
        assert!(
            !docs.contains("compile_error") && !docs.contains("must_use"),
            "{docs}"
        );
        assert!(docs.contains("of_crate"), "{docs}");
    }

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
