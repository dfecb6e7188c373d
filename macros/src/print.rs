//! `print!` and `println!` for kernels: a Rust format string, parsed here
//! into text and placeholders, built at run time into a C format string and
//! `vprintf`'s 8-byte value slots by `gpu_device::print::Printer` (each
//! value's conversion comes from its type, which only the compiler knows:
//! the `gpu_device::print::Print` trait).
//!
//! The model: [`Line`], a list of [`Piece`]s (text, or a placeholder naming
//! an argument and its [`Options`]). Errors point at the format string (or
//! the argument) that is wrong.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitStr, Token};

/// `"format", args...`: the macro's input.
pub struct Input {
    pub format: LitStr,
    pub args: Vec<Arg>,
}

/// One argument: positional `expr`, or named `name = expr`.
pub struct Arg {
    pub name: Option<Ident>,
    pub expr: Expr,
}

impl Parse for Input {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let format: LitStr = input.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a format string literal: `println!(\"x = {}\", x)`",
            )
        })?;
        Ok(Input {
            format,
            args: parse_args(input)?,
        })
    }
}

/// `, expr` or `, name = expr`, repeated (a trailing comma allowed).
pub fn parse_args(input: ParseStream) -> syn::Result<Vec<Arg>> {
    let mut args = Vec::new();
    while !input.is_empty() {
        input.parse::<Token![,]>()?;
        if input.is_empty() {
            break;
        }
        let name = if input.peek(Ident) && input.peek2(Token![=]) && !input.peek2(Token![==]) {
            let name: Ident = input.parse()?;
            input.parse::<Token![=]>()?;
            Some(name)
        } else {
            None
        };
        args.push(Arg {
            name,
            expr: input.parse()?,
        });
    }
    Ok(args)
}

/// The options of one placeholder (`{:<+08.3x}`).
#[derive(Clone, Copy, Default, Debug, PartialEq)]
struct Options {
    left: bool,
    right: bool,
    plus: bool,
    zero: bool,
    alternate: bool,
    width: Option<u8>,
    precision: Option<u8>,
    /// `gpu_device::print::kind`'s number.
    kind: u8,
}

/// Which argument a placeholder prints.
#[derive(Clone, Debug, PartialEq)]
enum Which {
    Index(usize),
    Name(String),
}

#[derive(Debug, PartialEq)]
enum Piece {
    Text(String),
    Value(Which, Options),
}

/// A parsed format string.
#[derive(Debug, PartialEq)]
struct Line {
    pieces: Vec<Piece>,
}

const KINDS: [(&str, u8); 7] = [
    ("", 0),
    ("?", 1),
    ("x", 2),
    ("X", 3),
    ("o", 4),
    ("e", 5),
    ("E", 6),
];

/// Parses a Rust format string; an error says what is wrong (not where: the
/// caller points at the literal).
fn parse_format(format: &str) -> Result<Line, String> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut next = 0usize;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                text.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                text.push('}');
            }
            '}' => return Err("unmatched `}` in the format string: write `}}` for a brace".into()),
            '{' => {
                let mut inside = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => inside.push(c),
                        None => {
                            return Err(
                                "unclosed `{` in the format string: write `{{` for a brace".into()
                            )
                        }
                    }
                }
                let (argument, spec) = match inside.split_once(':') {
                    Some((a, s)) => (a.trim(), s),
                    None => (inside.trim(), ""),
                };
                let which = if argument.is_empty() {
                    next += 1;
                    Which::Index(next - 1)
                } else if let Ok(i) = argument.parse::<usize>() {
                    Which::Index(i)
                } else if argument.chars().all(|c| c == '_' || c.is_alphanumeric())
                    && !argument.starts_with(|c: char| c.is_ascii_digit())
                {
                    Which::Name(argument.to_string())
                } else {
                    return Err(format!(
                        "`{{{inside}}}`: expected an argument index or name before `:`"
                    ));
                };
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(Piece::Value(which, parse_spec(spec, &inside)?));
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(Line { pieces })
}

/// Parses `[[fill]align][sign]['#']['0'][width]['.' precision][type]`.
fn parse_spec(spec: &str, placeholder: &str) -> Result<Options, String> {
    let unsupported = |what: &str| {
        format!("`{{{placeholder}}}`: {what} is not supported in a kernel's print (it becomes a C format string)")
    };
    let mut options = Options::default();
    let mut s: Vec<char> = spec.chars().collect();
    // Alignment, with an optional fill character before it.
    let align_at = match (s.first(), s.get(1)) {
        (Some(_), Some('<' | '>' | '^')) => {
            if s[0] != ' ' {
                return Err(unsupported("a fill character"));
            }
            Some(1)
        }
        (Some('<' | '>' | '^'), _) => Some(0),
        _ => None,
    };
    if let Some(at) = align_at {
        match s[at] {
            '<' => options.left = true,
            '>' => options.right = true,
            _ => return Err(unsupported("centring (`^`)")),
        }
        s.drain(..=at);
    }
    if s.first() == Some(&'+') {
        options.plus = true;
        s.remove(0);
    } else if s.first() == Some(&'-') {
        return Err(unsupported("the `-` sign flag"));
    }
    if s.first() == Some(&'#') {
        options.alternate = true;
        s.remove(0);
    }
    if s.first() == Some(&'0') {
        options.zero = true;
        s.remove(0);
    }
    let number = |s: &mut Vec<char>, what: &str| -> Result<Option<u8>, String> {
        let digits: String = s.iter().take_while(|c| c.is_ascii_digit()).collect();
        if digits.is_empty() {
            if s.first() == Some(&'*') {
                return Err(unsupported(&format!(
                    "a {what} taken from an argument (`*`)"
                )));
            }
            return Ok(None);
        }
        s.drain(..digits.len());
        if s.first() == Some(&'$') {
            return Err(unsupported(&format!(
                "a {what} taken from an argument (`$`)"
            )));
        }
        match digits.parse::<u8>() {
            Ok(n) => Ok(Some(n)),
            Err(_) => Err(format!(
                "`{{{placeholder}}}`: a {what} of at most 255 is supported in a kernel's print"
            )),
        }
    };
    options.width = number(&mut s, "width")?;
    if s.first() == Some(&'.') {
        s.remove(0);
        options.precision = number(&mut s, "precision")?;
        if options.precision.is_none() {
            return Err(format!("`{{{placeholder}}}`: expected digits after `.`"));
        }
    }
    let ty: String = s.into_iter().collect();
    options.kind = match KINDS.iter().find(|(t, _)| *t == ty) {
        Some((_, kind)) => *kind,
        None if ty == "b" => return Err(unsupported("binary (`{:b}`)")),
        None if ty.ends_with('?') => return Err(unsupported(&format!("`{ty}`"))),
        None => return Err(format!("`{{{placeholder}}}`: unknown format `{ty}`")),
    };
    if options.alternate && options.width.is_some() && !options.zero {
        return Err(unsupported("`#` with a width but without `0`"));
    }
    Ok(options)
}

/// The statements that build the line of `input` into a
/// `gpu_device::print::Printer` bound to `printer` (the caller emits or
/// keeps it), with `suffix` appended to the text (`"\n"` for `println!`).
pub fn build_line(
    input: &Input,
    suffix: &str,
    device: &TokenStream,
    printer: &Ident,
) -> syn::Result<TokenStream> {
    let span = input.format.span();
    let line = parse_format(&input.format.value()).map_err(|e| syn::Error::new(span, e))?;
    let positional: Vec<&Arg> = input.args.iter().filter(|a| a.name.is_none()).collect();
    let named: Vec<&Arg> = input.args.iter().filter(|a| a.name.is_some()).collect();
    if let Some(late) = input
        .args
        .iter()
        .skip_while(|a| a.name.is_none())
        .find(|a| a.name.is_none())
    {
        return Err(syn::Error::new_spanned(
            &late.expr,
            "positional arguments come before named ones",
        ));
    }
    // Every argument is evaluated once, in order; names captured from the
    // scope (`{x}`) after them.
    let mut values: Vec<TokenStream> = input
        .args
        .iter()
        .map(|a| {
            let e = &a.expr;
            quote!(&(#e))
        })
        .collect();
    let mut captured: Vec<String> = Vec::new();
    let mut used = vec![false; input.args.len()];
    let mut statements = Vec::new();
    let mut text_bytes = suffix.len();
    let mut placeholders = 0usize;
    let binding = |i: usize| Ident::new(&format!("__gpu_arg{i}"), Span::mixed_site());
    for piece in &line.pieces {
        match piece {
            Piece::Text(text) => {
                text_bytes += text.len() + text.matches('%').count();
                statements.push(quote!(#printer.literal(#text);));
            }
            Piece::Value(which, options) => {
                placeholders += 1;
                let index = match which {
                    Which::Index(i) => {
                        if *i >= positional.len() {
                            return Err(syn::Error::new(
                                span,
                                format!(
                                    "the format string asks for argument {i}, and {} positional argument{} given",
                                    positional.len(),
                                    if positional.len() == 1 { " is" } else { "s are" }
                                ),
                            ));
                        }
                        *i
                    }
                    Which::Name(name) => match named
                        .iter()
                        .position(|a| a.name.as_ref().is_some_and(|n| n == name))
                    {
                        Some(j) => positional.len() + j,
                        None => {
                            let at = match captured.iter().position(|c| c == name) {
                                Some(c) => c,
                                None => {
                                    captured.push(name.clone());
                                    let ident = Ident::new(name, span);
                                    values.push(quote!(&(#ident)));
                                    used.push(false);
                                    captured.len() - 1
                                }
                            };
                            input.args.len() + at
                        }
                    },
                };
                used[index] = true;
                let value = binding(index);
                // A type error points at the argument (or, captured, at the
                // format string).
                let at = input.args.get(index).map_or(span, |a| a.expr.span());
                let Options {
                    left,
                    right,
                    plus,
                    zero,
                    alternate,
                    width,
                    precision,
                    kind,
                } = *options;
                let width = option_tokens(width);
                let precision = option_tokens(precision);
                let trait_path = crate::path_option::respanned(&syn::parse2(device.clone())?, at);
                statements.push(quote_spanned! {at=>
                    #trait_path::print::Print::<#kind>::print(#value, &mut #printer, #device::print::Spec {
                        left: #left, right: #right, plus: #plus, zero: #zero, alternate: #alternate,
                        width: #width, precision: #precision,
                    });
                });
            }
        }
    }
    if let Some(unused) = used.iter().take(input.args.len()).position(|u| !u) {
        return Err(syn::Error::new_spanned(
            &input.args[unused].expr,
            "argument never used by the format string",
        ));
    }
    if placeholders > 32 {
        return Err(syn::Error::new(
            span,
            format!("a kernel's print takes at most 32 values (CUDA's printf limit); this one has {placeholders}"),
        ));
    }
    if !suffix.is_empty() {
        statements.push(quote!(#printer.literal(#suffix);));
    }
    // Text, then for each value its conversion (`%-+0` 3 digits `.` 3
    // digits `ll` letter: 16 bytes) or a `#` prefix, then strings' budget
    // and the NUL.
    let capacity = text_bytes + 18 * placeholders + 256 + 1;
    let bindings: Vec<Ident> = (0..values.len()).map(binding).collect();
    Ok(quote! {
        let mut #printer = #device::print::Printer::<#capacity, #placeholders>::new();
        match (#(#values,)*) {
            (#(#bindings,)*) => {
                #(#statements)*
            }
        }
    })
}

fn option_tokens(value: Option<u8>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// `print!` (`newline: false`) and `println!`.
pub fn expand(input: TokenStream, newline: bool) -> syn::Result<TokenStream> {
    let input: Input = syn::parse2(input)?;
    let printer = format_ident!("__gpu_line", span = Span::mixed_site());
    let device = quote!(::gpu_device);
    let build = build_line(&input, if newline { "\n" } else { "" }, &device, &printer)?;
    Ok(quote! {{
        #build
        #printer.emit();
    }})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(index: usize, options: Options) -> Piece {
        Piece::Value(Which::Index(index), options)
    }

    #[test]
    fn format_strings_parse_into_text_and_placeholders() {
        let line = parse_format("a {} b {:>8.3} {{c}} {1:#010x} {name:?} {:+e}").unwrap();
        assert_eq!(
            line.pieces,
            vec![
                Piece::Text("a ".into()),
                value(0, Options::default()),
                Piece::Text(" b ".into()),
                value(
                    1,
                    Options {
                        right: true,
                        width: Some(8),
                        precision: Some(3),
                        ..Options::default()
                    }
                ),
                Piece::Text(" {c} ".into()),
                value(
                    1,
                    Options {
                        alternate: true,
                        zero: true,
                        width: Some(10),
                        kind: 2,
                        ..Options::default()
                    }
                ),
                Piece::Text(" ".into()),
                Piece::Value(
                    Which::Name("name".into()),
                    Options {
                        kind: 1,
                        ..Options::default()
                    }
                ),
                Piece::Text(" ".into()),
                value(
                    2,
                    Options {
                        plus: true,
                        kind: 5,
                        ..Options::default()
                    }
                ),
            ]
        );
    }

    #[test]
    fn what_c_cannot_print_is_refused_with_the_reason() {
        for (format, error) in [
            ("{:^5}", "centring (`^`) is not supported"),
            ("{:*<5}", "a fill character is not supported"),
            ("{:b}", "binary (`{:b}`) is not supported"),
            ("{:.*}", "a precision taken from an argument (`*`)"),
            ("{:1$}", "a width taken from an argument (`$`)"),
            ("{:300}", "a width of at most 255"),
            ("{:#8x}", "`#` with a width but without `0`"),
            ("{:x?}", "`x?` is not supported"),
            ("{:y}", "unknown format `y`"),
            ("{", "unclosed `{`"),
            ("}", "unmatched `}`"),
            ("{a b}", "expected an argument index or name"),
        ] {
            let err = parse_format(format).expect_err(format);
            assert!(err.contains(error), "{format}: {err}");
        }
    }

    #[test]
    fn arguments_are_checked_against_the_placeholders() {
        let err = |tokens: TokenStream| expand(tokens, true).unwrap_err().to_string();
        assert!(err(quote!("{} {}", 1))
            .contains("asks for argument 1, and 1 positional argument is given"));
        assert!(err(quote!("{}", 1, 2)).contains("argument never used"));
        assert!(err(quote!("{}", a = 1, 2)).contains("positional arguments come before named ones"));
        assert!(err(quote!(x)).contains("expected a format string literal"));
        let many = "{}".repeat(33);
        let args = (0..33).map(|i| quote!(#i));
        assert!(err(quote!(#many, #(#args),*)).contains("at most 32 values"));
        // Named and captured arguments, each evaluated once.
        let out = expand(quote!("{a} {b} {a} {0}", 7, a = 1), true)
            .unwrap()
            .to_string();
        assert!(out.contains("Printer :: < 333usize , 4usize >"), "{out}");
        assert!(out.contains("& (b)"), "{out}");
    }
}
