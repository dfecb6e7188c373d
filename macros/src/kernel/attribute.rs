//! The arguments of `#[kernel(...)]`: a generic kernel's instances (types,
//! or const values), the option `block = (x, y, z)` and the path overrides,
//! in any order:
//!
//! ```text
//! #[kernel]
//! #[kernel(f32, f64)]
//! #[kernel(16, 32, block = (TILE, TILE))]
//! #[kernel(block = (32, 8), len(input >= out))]
//! #[kernel(block = 256, launch_bounds = (256, 2))]
//! #[kernel(cooperative)]
//! #[kernel(arch = "sm_90", block = 128, cluster = (2, 1, 1))]
//! #[kernel(unsafe(device_crate = "dev"), unsafe(runtime_crate = "rt"), module = "crate::ptx::MODULE")]
//! #[kernel(f32, f64, unsafe(runtime_crate = "rt"))]
//! ```
//!
//! (The crate paths are `unsafe(...)`: see [`crate::path_option`].)

use crate::errors::Errors;
use crate::path_option::{one_module_down, Key, PathOptions};
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::parse::{ParseStream, Parser};
use syn::{Ident, Token, Type};

/// Where the generated code finds the crates and the embedded module.
pub struct KernelPaths {
    /// `gpu_device`: `::gpu_device` unless `unsafe(device_crate = "...")`.
    pub device: syn::Path,
    /// `gpu_runtime`: `::gpu_runtime` unless `unsafe(runtime_crate = "...")`.
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
    /// `block = (x, y, z)`: the declared block shape, missing extents 1.
    pub block: Option<[syn::Expr; 3]>,
    /// `len(input >= covered)`: the input slice `input` holds at least the
    /// elements of the parameter `covered` (the launcher checks).
    pub lengths: Vec<LengthBound>,
    /// `launch_bounds = (max_threads, min_blocks)` or `launch_bounds =
    /// max_threads`: CUDA's `__launch_bounds__`.
    pub launch_bounds: Option<[syn::Expr; 2]>,
    /// `cooperative`: launched cooperatively, every block resident at once
    /// (what a `Grid` parameter's grid sync needs).
    pub cooperative: Option<Ident>,
    /// `cluster = (x, y, z)`: the thread-block cluster shape every launch
    /// has (missing extents 1), with the key (for errors).
    pub cluster: Option<(Ident, [syn::Expr; 3])>,
    /// `arch = "sm_80"`: the architecture the kernel needs (checked).
    pub arch: Option<String>,
    pub paths: KernelPaths,
}

/// `len(input >= covered)`, as written (the model checks the names).
pub struct LengthBound {
    pub input: Ident,
    pub covered: Ident,
}

const KEYS: &[Key] = &[
    Key::naming_crate("device_crate", "my_gpu::device", "gpu_device"),
    Key::naming_crate("runtime_crate", "my_gpu::runtime", "gpu_runtime"),
    Key::plain("module", "crate::kernels::MODULE"),
];
const EXPECTED: &str = "`block = (x, y, z)` (the only block shape the kernel runs in), `arch = \"sm_80\"` (the GPU architecture the kernel needs), `cooperative` (a cooperative launch: every block resident at once, for grid sync through a `Grid` parameter), `cluster = (x, y, z)` (thread-block clusters of that shape, sm_90 and later, for a `Cluster` parameter), `launch_bounds = (max_threads, min_blocks)` (CUDA's `__launch_bounds__`), `len(input >= out)` (the input slice holds at least `out`'s elements: the launcher checks), `unsafe(device_crate = \"path\")`, `unsafe(runtime_crate = \"path\")` or `module = \"path\"` (paths to the `gpu_device` crate, the `gpu_runtime` crate and the crate's `KERNEL_MODULE` static), besides the types or values of a generic kernel";
const CRATE_ADVICE: &str = "`crate = \"...\"` is ambiguous here: #[kernel] emits paths into two crates; write `unsafe(device_crate = \"path\")` (for `gpu_device`) and `unsafe(runtime_crate = \"path\")` (for `gpu_runtime`)";

/// The architectures `arch = "..."` accepts: those rustc's NVPTX target
/// knows as target features (`-C target-cpu` sets them, and each implies
/// the earlier ones of its family, but an `a` architecture's features only
/// on itself).
pub const ARCHS: &[&str] = &[
    "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_90a", "sm_100",
    "sm_100a", "sm_101", "sm_101a", "sm_120", "sm_120a",
];

/// Parses the attribute's arguments; problems go to `errors` and parsing
/// goes on where it can (after a token that is neither an option nor an
/// instance, the rest of the attribute is skipped).
pub fn parse(args: TokenStream, const_instances: bool, errors: &mut Errors) -> KernelAttribute {
    let mut options = PathOptions::new(KEYS, EXPECTED).with_misspelling("crate", CRATE_ADVICE);
    let mut instances = Vec::new();
    let mut block: Option<[syn::Expr; 3]> = None;
    let mut block_seen = false;
    let mut lengths = Vec::new();
    let mut launch_bounds: Option<[syn::Expr; 2]> = None;
    let mut bounds_seen = false;
    let mut cooperative: Option<Ident> = None;
    let mut arch: Option<String> = None;
    let mut cluster: Option<(Ident, [syn::Expr; 3])> = None;
    let mut cluster_seen = false;
    let parser = |input: ParseStream| -> syn::Result<()> {
        while !input.is_empty() {
            if starts_flag(input, "cooperative") {
                let key: Ident = input.parse()?;
                if cooperative.is_some() {
                    errors.push(syn::Error::new(
                        key.span(),
                        "`cooperative` is given twice: keep one",
                    ));
                }
                cooperative = Some(key);
            } else if starts_key(input, "arch") {
                let key: Ident = input.parse()?;
                input.parse::<Token![=]>()?;
                let value: syn::LitStr = input.parse()?;
                if arch.is_some() {
                    errors.push(syn::Error::new(
                        key.span(),
                        "`arch` is given twice: keep one",
                    ));
                } else if ARCHS.contains(&value.value().as_str()) {
                    arch = Some(value.value());
                } else {
                    errors.push(syn::Error::new(
                        value.span(),
                        format!(
                            "`arch` names the architecture the kernel needs, one of {}",
                            ARCHS.join(", ")
                        ),
                    ));
                }
            } else if starts_key(input, "cluster") {
                let key: Ident = input.parse()?;
                input.parse::<Token![=]>()?;
                let value: syn::Expr = input.parse()?;
                if cluster_seen {
                    errors.push(syn::Error::new(
                        key.span(),
                        "`cluster` is given twice: keep one",
                    ));
                } else if let Some(extents) = errors.ok(extents(value, "cluster")) {
                    cluster = Some((key, extents));
                }
                cluster_seen = true;
            } else if starts_key(input, "launch_bounds") {
                let key: Ident = input.parse()?;
                input.parse::<Token![=]>()?;
                let value: syn::Expr = input.parse()?;
                if bounds_seen {
                    errors.push(syn::Error::new(
                        key.span(),
                        "`launch_bounds` is given twice: keep one",
                    ));
                } else if let Some(bounds) = errors.ok(bounds_pair(value)) {
                    launch_bounds = Some(bounds);
                }
                bounds_seen = true;
            } else if starts_block(input) {
                let key: Ident = input.parse()?;
                input.parse::<Token![=]>()?;
                let value: syn::Expr = input.parse()?;
                if block_seen {
                    errors.push(syn::Error::new(
                        key.span(),
                        "`block` is given twice: keep one",
                    ));
                } else if let Some(extents) = errors.ok(extents(value, "block")) {
                    block = Some(extents);
                }
                block_seen = true;
            } else if starts_len(input) {
                input.parse::<Ident>()?;
                let content;
                syn::parenthesized!(content in input);
                let bound = LengthBound {
                    input: content.parse()?,
                    covered: {
                        content.parse::<Token![>=]>()?;
                        content.parse()?
                    },
                };
                if !content.is_empty() {
                    return Err(content.error("`len` takes one relation: `len(input >= out)`"));
                }
                lengths.push(bound);
            } else if PathOptions::starts_option(input) {
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
        block,
        lengths,
        launch_bounds,
        cooperative,
        cluster,
        arch,
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

/// Whether `input` starts with `block =`.
fn starts_block(input: ParseStream) -> bool {
    starts_key(input, "block")
}

/// Whether `input` starts with the option `name` alone (then `,` or the end).
fn starts_flag(input: ParseStream, name: &str) -> bool {
    let fork = input.fork();
    fork.parse::<Ident>().is_ok_and(|key| key == name) && (fork.is_empty() || fork.peek(Token![,]))
}

/// Whether `input` starts with `<name> =`.
fn starts_key(input: ParseStream, name: &str) -> bool {
    let fork = input.fork();
    fork.parse::<Ident>().is_ok_and(|key| key == name)
        && fork.peek(Token![=])
        && !fork.peek(Token![==])
}

/// `(max_threads, min_blocks)` or `max_threads` (min_blocks 0: not asked).
fn bounds_pair(value: syn::Expr) -> syn::Result<[syn::Expr; 2]> {
    match value {
        syn::Expr::Tuple(t) if t.elems.len() == 2 => {
            let mut it = t.elems.into_iter();
            Ok([it.next().expect("two"), it.next().expect("two")])
        }
        syn::Expr::Tuple(t) => Err(syn::Error::new_spanned(
            t,
            "`launch_bounds` takes the most threads of a block and, optionally, the blocks per multiprocessor: `launch_bounds = (256, 2)`",
        )),
        syn::Expr::Paren(p) => Ok([*p.expr, syn::parse_quote!(0)]),
        other => Ok([other, syn::parse_quote!(0)]),
    }
}

/// Whether `input` starts with `len(`.
fn starts_len(input: ParseStream) -> bool {
    let fork = input.fork();
    fork.parse::<Ident>().is_ok_and(|key| key == "len") && fork.peek(syn::token::Paren)
}

/// `(x, y, z)`, `(x, y)`, `(x)` or `x`: three extents, the missing ones 1
/// (of the option `what`: `block` or `cluster`).
fn extents(value: syn::Expr, what: &str) -> syn::Result<[syn::Expr; 3]> {
    let extents: Vec<syn::Expr> = match value {
        syn::Expr::Tuple(t) if (1..=3).contains(&t.elems.len()) => t.elems.into_iter().collect(),
        syn::Expr::Tuple(t) => {
            return Err(syn::Error::new_spanned(
                t,
                format!("`{what}` takes one to three extents: `{what} = (x, y, z)`"),
            ))
        }
        syn::Expr::Paren(p) => vec![*p.expr],
        other => vec![other],
    };
    let one: syn::Expr = syn::parse_quote!(1);
    let mut it = extents.into_iter();
    Ok([
        it.next().expect("at least one extent"),
        it.next().unwrap_or_else(|| one.clone()),
        it.next().unwrap_or(one),
    ])
}
