//! `key = "path"` options: how every macro of this crate is told where to
//! find `gpu_device`, `gpu_runtime` or the embedded PTX module when they are
//! not at their usual paths (a renamed dependency, a re-export), in the
//! manner of tokio's `#[tokio::main(crate = "...")]`.
//!
//! The value is a string literal holding a path, parsed as a `syn::Path`
//! (module style: no generic arguments).
//!
//! A key that names one of our crates (`crate`, `device_crate`,
//! `runtime_crate`) is written `unsafe(key = "path")`, as Rust spells an
//! assertion the compiler cannot check (`#[unsafe(no_mangle)]`): the
//! generated code calls `unsafe` functions of the crate through the path
//! (`Block::for_kernel_entry`, `EntryShape::new`, `EmbeddedModule::of_crate`, the
//! derive's `unsafe impl`), so the path must lead to the genuine crate. No
//! check of the path could prove it: a module can re-export all of
//! `gpu_device` but one item, in safe code, in this crate or another. The
//! `unsafe(...)` is the user's promise that it leads to the crate itself (a
//! renamed dependency, or a re-export of it). `module = "path"` needs none:
//! the static it names is an `EmbeddedModule`, which only `unsafe` code
//! makes, and one that `embed_kernels!` made refuses (at compile time) the
//! launchers of any crate but its own.
//!
//! An unknown key, a key given twice, a crate key without `unsafe(...)`, a
//! `module` inside one, an `unsafe(...)` that does not hold one `key =
//! "path"`, and a value that is not such a path are each reported at its
//! own span, and parsing goes on after them.

use crate::errors::Errors;
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, LitStr, Token};

/// One key a macro accepts.
pub struct Key {
    pub name: &'static str,
    /// An example value, for the messages.
    pub example: &'static str,
    /// The crate the path names (`"gpu_device"`), for a key that must be
    /// written `unsafe(key = "...")`; `None` for a key that must not.
    pub names_crate: Option<&'static str>,
}

impl Key {
    /// A key naming the crate `names_crate`: written `unsafe(name = "...")`.
    pub const fn naming_crate(
        name: &'static str,
        example: &'static str,
        names_crate: &'static str,
    ) -> Key {
        Key {
            name,
            example,
            names_crate: Some(names_crate),
        }
    }

    /// A key written `name = "..."`, without `unsafe(...)`.
    pub const fn plain(name: &'static str, example: &'static str) -> Key {
        Key {
            name,
            example,
            names_crate: None,
        }
    }

    /// The option as it is written, with `value`.
    fn spelled(&self, value: &str) -> String {
        match self.names_crate {
            Some(_) => format!("`unsafe({} = \"{value}\")`", self.name),
            None => format!("`{} = \"{value}\"`", self.name),
        }
    }
}

/// The path options of one macro invocation.
pub struct PathOptions {
    /// The keys this macro accepts.
    keys: &'static [Key],
    /// What the macro accepts, for the message of an unknown key.
    expected: &'static str,
    /// A key that is easy to write by mistake, and what to write instead.
    misspelling: Option<(&'static str, &'static str)>,
    /// Every key seen (also those whose value was wrong), for duplicates.
    seen: Vec<Ident>,
    /// The keys whose value was a path.
    given: Vec<(String, syn::Path)>,
}

impl PathOptions {
    /// Options with the given keys; `expected` names all that the macro
    /// takes (for example ``"`unsafe(runtime_crate = \"path\")`"``).
    pub fn new(keys: &'static [Key], expected: &'static str) -> PathOptions {
        PathOptions {
            keys,
            expected,
            misspelling: None,
            seen: Vec::new(),
            given: Vec::new(),
        }
    }

    /// Reports `key` with `advice` instead of as an unknown key.
    pub fn with_misspelling(mut self, key: &'static str, advice: &'static str) -> PathOptions {
        self.misspelling = Some((key, advice));
        self
    }

    /// Whether `input` starts with `key =` (any identifier or keyword, such
    /// as `crate`, followed by `=`) or `unsafe(`.
    pub fn starts_option(input: ParseStream) -> bool {
        if input.peek(Token![unsafe]) && input.peek2(syn::token::Paren) {
            return true;
        }
        let fork = input.fork();
        fork.call(Ident::parse_any).is_ok() && fork.peek(Token![=]) && !fork.peek(Token![==])
    }

    /// Parses one `key = "path"` or `unsafe(key = "path")`, up to the next
    /// comma at this level. What is wrong with it goes to `errors`; only
    /// input that is neither at all is returned as an error.
    pub fn parse_one(&mut self, input: ParseStream, errors: &mut Errors) -> syn::Result<()> {
        if !input.peek(Token![unsafe]) {
            return self.parse_key_value(input, None, errors);
        }
        let unsafe_token: Token![unsafe] = input.parse()?;
        let content;
        let parens = syn::parenthesized!(content in input);
        let holds_option = {
            let fork = content.fork();
            fork.call(Ident::parse_any).is_ok() && fork.peek(Token![=]) && !fork.peek(Token![==])
        };
        if !holds_option {
            let tokens: TokenStream = content.parse()?;
            let message = "`unsafe(...)` holds one option naming a crate, such as `unsafe(device_crate = \"my_gpu::device\")`";
            errors.push(if tokens.is_empty() {
                syn::Error::new(parens.span.join(), message)
            } else {
                syn::Error::new_spanned(tokens, message)
            });
            return Ok(());
        }
        self.parse_key_value(&content, Some(unsafe_token.span), errors)?;
        if !content.is_empty() {
            let rest: TokenStream = content.parse()?;
            errors.push(syn::Error::new_spanned(
                rest,
                "`unsafe(...)` holds one option: write each crate path in its own `unsafe(key = \"path\")`",
            ));
        }
        Ok(())
    }

    /// `key = value`, up to the next comma; `unsafe_span` is that of the
    /// `unsafe` it is written in, if it is.
    fn parse_key_value(
        &mut self,
        input: ParseStream,
        unsafe_span: Option<Span>,
        errors: &mut Errors,
    ) -> syn::Result<()> {
        let key = input.call(Ident::parse_any)?;
        let equals: Token![=] = input.parse()?;
        let mut value = TokenStream::new();
        while !input.is_empty() && !input.peek(Token![,]) {
            value.extend([input.parse::<TokenTree>()?]);
        }
        let name = key.to_string();
        let Some(spec) = self.keys.iter().find(|k| k.name == name) else {
            let message = match self.misspelling {
                Some((wrong, advice)) if wrong == name => advice.to_string(),
                _ => format!("unknown option `{name}`: expected {}", self.expected),
            };
            errors.push(syn::Error::new(key.span(), message));
            return Ok(());
        };
        if self.seen.contains(&key) {
            errors.push(syn::Error::new(
                key.span(),
                format!("`{name}` is given twice: keep one"),
            ));
            return Ok(());
        }
        self.seen.push(key.clone());
        let literal = syn::parse2::<LitStr>(value.clone()).ok();
        let written = literal
            .as_ref()
            .map_or_else(|| spec.example.to_string(), LitStr::value);
        match (spec.names_crate, unsafe_span) {
            (Some(names_crate), None) => errors.push(syn::Error::new(
                key.span(),
                format!(
                    "write {}: the generated code calls `unsafe` functions of `{names_crate}` through this path, so it must lead to the genuine `{names_crate}` crate (a renamed dependency, or a re-export of it), which the compiler cannot check; `unsafe(...)` is your promise that it does",
                    spec.spelled(&written)
                ),
            )),
            (None, Some(span)) => errors.push(syn::Error::new(
                span,
                format!(
                    "`{name}` needs no `unsafe(...)`: write {} (the static it names is an `EmbeddedModule`, which only `unsafe` code makes: that is where its promise is made)",
                    spec.spelled(&written)
                ),
            )),
            _ => {}
        }
        let example = spec.spelled(spec.example);
        if value.is_empty() {
            errors.push(syn::Error::new(
                equals.span,
                format!("`{name} =` needs a path in a string literal, such as {example}"),
            ));
            return Ok(());
        }
        let Some(literal) = literal else {
            let message = match syn::parse2::<syn::Path>(value.clone()) {
                Ok(path) => format!(
                    "`{name}` takes a string literal: write {}",
                    spec.spelled(&path.to_token_stream().to_string().replace(' ', ""))
                ),
                Err(_) => format!("`{name}` takes a path in a string literal, such as {example}"),
            };
            errors.push(syn::Error::new_spanned(value, message));
            return Ok(());
        };
        match literal.parse_with(syn::Path::parse_mod_style) {
            Ok(path) => self.given.push((name, path)),
            Err(_) => errors.push(syn::Error::new(
                literal.span(),
                format!(
                    "`{name}` must be a path, such as {example}, not {:?}",
                    literal.value()
                ),
            )),
        }
        Ok(())
    }

    /// The path given for `key`, if it was given and is a path.
    pub fn get(&self, key: &str) -> Option<&syn::Path> {
        self.given.iter().find(|(k, _)| k == key).map(|(_, p)| p)
    }
}

/// `path`'s tokens, every one spanned at `span`: for code whose errors are
/// reported at a span of the user's (a bound on a field's type).
pub fn respanned(path: &syn::Path, span: Span) -> TokenStream {
    fn respan(tokens: TokenStream, span: Span) -> TokenStream {
        tokens
            .into_iter()
            .map(|mut tree| {
                if let TokenTree::Group(g) = &tree {
                    let mut group = Group::new(g.delimiter(), respan(g.stream(), span));
                    group.set_span(span);
                    tree = TokenTree::Group(group);
                } else {
                    tree.set_span(span);
                }
                tree
            })
            .collect()
    }
    respan(path.to_token_stream(), span)
}

/// `path` as written one module below the place it was written for: in the
/// module `k` that `#[kernel]` generates next to the kernel (whose items name
/// only the crates), which imports the kernel's scope with `use super::*`. Paths from the crate
/// root or an extern crate stay the same; `self::...` becomes
/// `super::...`, and `super::...` becomes `super::super::...`.
pub fn one_module_down(path: &syn::Path) -> syn::Path {
    let mut path = path.clone();
    if path.leading_colon.is_none() {
        match path.segments.first() {
            Some(first) if first.ident == "self" => {
                let span = first.ident.span();
                path.segments[0].ident = Ident::new("super", span);
            }
            Some(first) if first.ident == "super" => {
                let span = first.ident.span();
                path.segments
                    .insert(0, syn::PathSegment::from(Ident::new("super", span)));
            }
            _ => {}
        }
    }
    path
}

#[cfg(test)]
mod tests {
    use super::{one_module_down, Key, PathOptions};
    use crate::errors::Errors;
    use quote::{quote, ToTokens};
    use syn::parse::{ParseStream, Parser};
    use syn::Token;

    const KEYS: &[Key] = &[
        Key::naming_crate("device_crate", "my_gpu::device", "gpu_device"),
        Key::plain("module", "crate::M"),
    ];

    /// Parses `input` as comma-separated options; returns the options and
    /// the messages of the errors.
    fn options(input: proc_macro2::TokenStream) -> (PathOptions, Vec<String>) {
        let mut options = PathOptions::new(KEYS, "the two keys")
            .with_misspelling("crate", "write `device_crate`");
        let mut errors = Errors::default();
        let parser = |input: ParseStream| {
            while !input.is_empty() {
                assert!(PathOptions::starts_option(input));
                options.parse_one(input, &mut errors)?;
                input.parse::<Option<Token![,]>>()?;
            }
            Ok(())
        };
        parser.parse2(input).expect("only options");
        let messages = errors
            .finish()
            .err()
            .map(|e| e.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default();
        (options, messages)
    }

    #[test]
    fn paths_are_parsed_and_every_bad_option_is_reported() {
        let (good, messages) = options(quote!(
            unsafe(device_crate = "crate::re::dev"),
            module = "::k::M"
        ));
        assert!(messages.is_empty(), "{messages:?}");
        assert_eq!(
            good.get("device_crate")
                .unwrap()
                .to_token_stream()
                .to_string(),
            "crate :: re :: dev"
        );
        assert_eq!(
            good.get("module").unwrap().to_token_stream().to_string(),
            ":: k :: M"
        );

        let (bad, messages) = options(quote!(
            unsafe(device_crate = "not a path"),
            module = M,
            colour = "red",
            unsafe(device_crate = "dev"),
            crate = "x",
            module =
        ));
        assert!(bad.get("device_crate").is_none());
        assert!(bad.get("module").is_none());
        assert_eq!(messages.len(), 6, "{messages:?}");
        assert!(messages[0].contains("must be a path"), "{messages:?}");
        assert_eq!(
            messages[1],
            "`module` takes a string literal: write `module = \"M\"`"
        );
        assert!(messages[2].contains("unknown option `colour`: expected the two keys"));
        assert!(messages[3].contains("given twice"), "{messages:?}");
        assert_eq!(messages[4], "write `device_crate`");
        assert!(messages[5].contains("is given twice"), "{messages:?}");
    }

    #[test]
    fn a_crate_path_is_a_promise_written_unsafe() {
        // Without `unsafe(...)`: an error at the key that says why, with the
        // user's path in the suggestion (the path is kept, so nothing else
        // fails for want of it).
        let (given, messages) = options(quote!(device_crate = "crate::fake"));
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(
            messages[0].starts_with(
                "write `unsafe(device_crate = \"crate::fake\")`: the generated code calls `unsafe` functions of `gpu_device` through this path, so it must lead to the genuine `gpu_device` crate (a renamed dependency, or a re-export of it)"
            ),
            "{messages:?}"
        );
        assert!(messages[0].ends_with("`unsafe(...)` is your promise that it does"));
        assert!(given.get("device_crate").is_some());
        // A bad value without `unsafe`: both errors.
        let (_, messages) = options(quote!(device_crate = dev));
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].starts_with("write `unsafe(device_crate = \"my_gpu::device\")`"));
        assert_eq!(
            messages[1],
            "`device_crate` takes a string literal: write `unsafe(device_crate = \"dev\")`"
        );
        // The module needs no promise of its own.
        let (given, messages) = options(quote!(unsafe(module = "crate::M")));
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(
            messages[0].starts_with(
                "`module` needs no `unsafe(...)`: write `module = \"crate::M\"` (the static it names is an `EmbeddedModule`, which only `unsafe` code makes"
            ),
            "{messages:?}"
        );
        assert!(given.get("module").is_some());
    }

    #[test]
    fn unsafe_holds_exactly_one_option() {
        for (input, message) in [
            (
                quote!(unsafe()),
                "`unsafe(...)` holds one option naming a crate",
            ),
            (
                quote!(unsafe("dev")),
                "`unsafe(...)` holds one option naming a crate",
            ),
            (
                quote!(unsafe(device_crate)),
                "`unsafe(...)` holds one option naming a crate",
            ),
            (
                quote!(unsafe(device_crate = "dev", module = "crate::M")),
                "`unsafe(...)` holds one option: write each crate path in its own",
            ),
        ] {
            let (_, messages) = options(input.clone());
            assert_eq!(messages.len(), 1, "{input}: {messages:?}");
            assert!(messages[0].starts_with(message), "{input}: {messages:?}");
        }
        // What follows a bad `unsafe(...)` is still parsed.
        let (given, messages) = options(quote!(unsafe(1 + 1), module = "crate::M"));
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(given.get("module").is_some());
    }

    #[test]
    fn generic_arguments_and_empty_paths_are_not_paths() {
        for value in [quote!("Vec<u8>"), quote!(""), quote!("a::")] {
            let (_, messages) = options(quote!(module = #value));
            assert_eq!(messages.len(), 1, "{value}: {messages:?}");
            assert!(messages[0].contains("must be a path"), "{messages:?}");
        }
    }

    #[test]
    fn relative_paths_are_rewritten_for_the_launcher_module() {
        for (written, inside) in [
            ("::dev", ":: dev"),
            ("crate::re::dev", "crate :: re :: dev"),
            ("dev", "dev"),
            ("self::M", "super :: M"),
            ("super::M", "super :: super :: M"),
        ] {
            let path: syn::Path = syn::parse_str(written).unwrap();
            assert_eq!(one_module_down(&path).to_token_stream().to_string(), inside);
        }
    }
}
