//! `key = "path"` options: how every macro of this crate is told where to
//! find `gpu_device`, `gpu_runtime` or the embedded PTX module when they are
//! not at their usual paths (a renamed dependency, a re-export), in the
//! manner of tokio's `#[tokio::main(crate = "...")]`.
//!
//! The value is a string literal holding a path, parsed as a `syn::Path`
//! (module style: no generic arguments). An unknown key, a key given twice
//! and a value that is not such a path are each reported at its own span,
//! and parsing goes on after them.

use crate::errors::Errors;
use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Ident, LitStr, Token};

/// The path options of one macro invocation.
pub struct PathOptions {
    /// The keys this macro accepts, each with an example value.
    keys: &'static [(&'static str, &'static str)],
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
    /// Options with the given keys, each with an example value for the
    /// messages; `expected` names all that the macro takes (for example
    /// ``"`runtime_crate = \"path\"`"``).
    pub fn new(
        keys: &'static [(&'static str, &'static str)],
        expected: &'static str,
    ) -> PathOptions {
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
    /// as `crate`, followed by `=`).
    pub fn starts_option(input: ParseStream) -> bool {
        let fork = input.fork();
        fork.call(Ident::parse_any).is_ok() && fork.peek(Token![=]) && !fork.peek(Token![==])
    }

    /// Parses one `key = "path"`, up to the next comma at this level.
    /// What is wrong with the key or the value goes to `errors`; only input
    /// that is not `key = ...` at all is returned as an error.
    pub fn parse_one(&mut self, input: ParseStream, errors: &mut Errors) -> syn::Result<()> {
        let key = input.call(Ident::parse_any)?;
        let equals: Token![=] = input.parse()?;
        let mut value = TokenStream::new();
        while !input.is_empty() && !input.peek(Token![,]) {
            value.extend([input.parse::<TokenTree>()?]);
        }
        let name = key.to_string();
        let Some(&(_, example)) = self.keys.iter().find(|(k, _)| *k == name) else {
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
        self.seen.push(key);
        let example = format!("`{name} = \"{example}\"`");
        if value.is_empty() {
            errors.push(syn::Error::new(
                equals.span,
                format!("`{name} =` needs a path in a string literal, such as {example}"),
            ));
            return Ok(());
        }
        let Ok(literal) = syn::parse2::<LitStr>(value.clone()) else {
            let message = match syn::parse2::<syn::Path>(value.clone()) {
                Ok(path) => format!(
                    "`{name}` takes a string literal: write `{name} = \"{}\"`",
                    path.to_token_stream().to_string().replace(' ', "")
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
/// launcher module that `#[kernel]` generates next to the kernel, which
/// imports the kernel's scope with `use super::*`. Paths from the crate
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
    use super::{one_module_down, PathOptions};
    use crate::errors::Errors;
    use quote::{quote, ToTokens};
    use syn::parse::{ParseStream, Parser};
    use syn::Token;

    /// Parses `input` as comma-separated options; returns the options and
    /// the messages of the errors.
    fn options(input: proc_macro2::TokenStream) -> (PathOptions, Vec<String>) {
        let mut options = PathOptions::new(
            &[("device_crate", "my_gpu::device"), ("module", "crate::M")],
            "the two keys",
        )
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
        parser.parse2(input).expect("only key = value");
        let messages = errors
            .finish()
            .err()
            .map(|e| e.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default();
        (options, messages)
    }

    #[test]
    fn paths_are_parsed_and_every_bad_option_is_reported() {
        let (good, messages) = options(quote!(device_crate = "crate::re::dev", module = "::k::M"));
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
            device_crate = "not a path",
            module = M,
            colour = "red",
            device_crate = "dev",
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
