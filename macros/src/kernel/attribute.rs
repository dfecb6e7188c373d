//! The arguments of `#[kernel(...)]`: a generic kernel's instances (types,
//! or const values) and the path overrides, in any order:
//!
//! ```text
//! #[kernel]
//! #[kernel(f32, f64)]
//! #[kernel(16, 32)]
//! #[kernel(device_crate = "dev", runtime_crate = "rt", module = "crate::ptx::MODULE")]
//! #[kernel(f32, f64, runtime_crate = "rt")]
//! ```

use crate::errors::Errors;
use crate::path_option::{one_module_down, PathOptions};
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::{ParseStream, Parser};
use syn::{Token, Type};

/// Where the generated code finds the crates and the embedded module.
pub struct KernelPaths {
    /// `gpu_device`: `::gpu_device` unless `device_crate = "..."`.
    pub device: syn::Path,
    /// `gpu_runtime`: `::gpu_runtime` unless `runtime_crate = "..."`.
    pub runtime: syn::Path,
    /// The `EmbeddedModule` static: `crate::KERNEL_MODULE` unless `module = "..."`.
    pub module: syn::Path,
}

impl KernelPaths {
    /// The same paths as written inside the launcher module, one module
    /// below the kernel.
    pub fn in_launcher_module(&self) -> KernelPaths {
        KernelPaths {
            device: one_module_down(&self.device),
            runtime: one_module_down(&self.runtime),
            module: one_module_down(&self.module),
        }
    }
}

impl Default for KernelPaths {
    fn default() -> KernelPaths {
        KernelPaths {
            device: syn::parse_quote!(::gpu_device),
            runtime: syn::parse_quote!(::gpu_runtime),
            module: syn::parse_quote!(crate::KERNEL_MODULE),
        }
    }
}

/// The parsed arguments of `#[kernel(...)]`.
pub struct KernelAttribute {
    /// The listed instances, as written: types, or const values when
    /// `const_instances`.
    pub instances: Vec<TokenStream>,
    pub paths: KernelPaths,
}

const KEYS: &[(&str, &str)] = &[
    ("device_crate", "my_gpu::device"),
    ("runtime_crate", "my_gpu::runtime"),
    ("module", "crate::kernels::MODULE"),
];
const EXPECTED: &str = "`device_crate = \"path\"`, `runtime_crate = \"path\"` or `module = \"path\"` (paths to the `gpu_device` crate, the `gpu_runtime` crate and the crate's `KERNEL_MODULE` static), besides the types or values of a generic kernel";
const CRATE_ADVICE: &str = "`crate = \"...\"` is ambiguous here: #[kernel] emits paths into two crates; write `device_crate = \"path\"` (for `gpu_device`) and `runtime_crate = \"path\"` (for `gpu_runtime`)";

/// Parses the attribute's arguments; problems go to `errors` and parsing
/// goes on where it can (after a token that is neither an option nor an
/// instance, the rest of the attribute is skipped).
pub fn parse(args: TokenStream, const_instances: bool, errors: &mut Errors) -> KernelAttribute {
    let mut options = PathOptions::new(KEYS, EXPECTED).with_misspelling("crate", CRATE_ADVICE);
    let mut instances = Vec::new();
    let parser = |input: ParseStream| -> syn::Result<()> {
        while !input.is_empty() {
            if PathOptions::starts_option(input) {
                options.parse_one(input, errors)?;
            } else if const_instances {
                instances.push(input.parse::<syn::Expr>()?.to_token_stream());
            } else {
                instances.push(input.parse::<Type>()?.to_token_stream());
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(())
    };
    if let Err(e) = parser.parse2(args) {
        errors.push(e);
    }
    let default = KernelPaths::default();
    KernelAttribute {
        instances,
        paths: KernelPaths {
            device: options
                .get("device_crate")
                .cloned()
                .unwrap_or(default.device),
            runtime: options
                .get("runtime_crate")
                .cloned()
                .unwrap_or(default.runtime),
            module: options.get("module").cloned().unwrap_or(default.module),
        },
    }
}
