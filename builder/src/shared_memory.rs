//! Moves the statics behind `shared_array!` (and the dynamic shared array)
//! into PTX's shared state space.
//!
//! Rust has no address spaces: `gpu-device` declares each static shared
//! array as an ordinary `static` named `__gpu_shared_<crate>_<n>`, and the
//! dynamic array as the extern static `__gpu_shared_dynamic`. In the linked
//! module's textual IR, this pass turns each such global into an
//! `addrspace(3)` global (with an `undef` initialiser, as shared memory has
//! no initial value) and wraps every use in an `addrspacecast` to the generic
//! address space. LLVM's InferAddressSpaces then follows the casts, so loads,
//! stores and atomics on these arrays become `ld.shared`, `st.shared` and
//! `atom.shared` instead of generic accesses.

/// The symbol prefix `gpu-device` reserves for shared memory.
pub const PREFIX: &str = "__gpu_shared_";

/// `ir` with the shared globals moved to address space 3; `None` when it has
/// none. An error names a definition this pass cannot read.
pub fn move_to_shared_space(ir: &str) -> Result<Option<String>, String> {
    move_to_space(ir, &Space::SHARED)
}

/// Where a pass moves the globals of a symbol prefix.
pub(crate) struct Space {
    /// The symbol prefix of the globals moved.
    pub(crate) prefix: &'static str,
    /// The LLVM address space (3: shared, 4: constant).
    pub(crate) number: u32,
    /// Whether a definition keeps its linkage and initialiser (constant
    /// memory, which the host sets) or becomes an internal global with an
    /// `undef` one (shared memory, which has no initial value).
    pub(crate) keep_initializer: bool,
    /// What the space is called in errors.
    pub(crate) name: &'static str,
}

impl Space {
    const SHARED: Space = Space {
        prefix: PREFIX,
        number: 3,
        keep_initializer: false,
        name: "shared memory",
    };
}

/// `ir` with the globals of `space.prefix` moved to `space`, and their uses
/// cast to generic pointers; `None` when it has none.
pub(crate) fn move_to_space(ir: &str, space: &Space) -> Result<Option<String>, String> {
    let mut names = Vec::new();
    let mut out = String::with_capacity(ir.len() + 1024);
    for line in ir.lines() {
        match definition_in(line, space)? {
            Some((name, rewritten)) => {
                names.push(name);
                out.push_str(&rewritten);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    if names.is_empty() {
        return Ok(None);
    }
    Ok(Some(wrap_uses(&out, &names, space)))
}

/// A definition line `@<prefix>... = ...`: its name and the line that
/// defines it in `space`.
fn definition_in(line: &str, space: &Space) -> Result<Option<(String, String)>, String> {
    let Some(rest) = line.strip_prefix('@') else {
        return Ok(None);
    };
    if !rest.starts_with(space.prefix) {
        return Ok(None);
    }
    let end = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
    let name = &rest[..end];
    let Some(definition) = rest[end..].trim_start().strip_prefix('=') else {
        return Ok(None);
    };
    let unreadable = || {
        format!(
            "cannot move `@{name}` to {}: unexpected definition `{line}`",
            space.name
        )
    };
    let words_end = definition
        .find(" global ")
        .or_else(|| definition.find(" constant "))
        .ok_or_else(unreadable)?;
    let external = definition[..words_end]
        .split_whitespace()
        .any(|w| w == "external");
    let after_keyword = definition[words_end..]
        .trim_start()
        .split_once(' ')
        .ok_or_else(unreadable)?
        .1;
    let ty_len = type_length(after_keyword).ok_or_else(unreadable)?;
    let ty = &after_keyword[..ty_len];
    let align = definition
        .split(", ")
        .find_map(|part| part.trim().strip_prefix("align "))
        .map(|a| format!(", align {}", a.trim()))
        .unwrap_or_default();
    let number = space.number;
    let rewritten = if space.keep_initializer {
        // The same definition, in the space: `addrspace(N)` goes right
        // before the `global` (or `constant`) keyword.
        let keyword = words_end + 1;
        let at = line.len() - definition.len() + keyword;
        format!("{}addrspace({number}) {}", &line[..at], &line[at..])
    } else if external {
        format!("@{name} = external addrspace({number}) global {ty}{align}")
    } else {
        format!("@{name} = internal addrspace({number}) global {ty} undef{align}")
    };
    Ok(Some((name.to_string(), rewritten)))
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$'
}

/// The length of the LLVM type at the start of `s`: a bracketed aggregate
/// (`[4 x i8]`, `<{ ... }>`, `{ ... }`), a named type (`%T`), or a word.
fn type_length(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    match bytes.first()? {
        b'[' | b'{' | b'<' => {
            let mut depth = 0i32;
            for (i, &b) in bytes.iter().enumerate() {
                match b {
                    b'[' | b'{' | b'<' => depth += 1,
                    b']' | b'}' | b'>' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        b'%' if bytes.get(1) == Some(&b'"') => s[2..].find('"').map(|i| i + 3),
        _ => Some(s.find(' ').unwrap_or(s.len())),
    }
}

/// Every use `@name` (not the definition) becomes a cast of the global in
/// `space` to a generic pointer.
fn wrap_uses(ir: &str, names: &[String], space: &Space) -> String {
    let prefix = space.prefix;
    let number = space.number;
    let mut out = String::with_capacity(ir.len() + 256 * names.len());
    for line in ir.lines() {
        let is_definition = names
            .iter()
            .any(|n| line.starts_with(&format!("@{n} ")) || line.starts_with(&format!("@{n}=")));
        if is_definition || !line.contains(prefix) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find(&format!("@{prefix}")) {
            out.push_str(&rest[..at]);
            let tail = &rest[at + 1..];
            let end = tail.find(|c: char| !is_name_char(c)).unwrap_or(tail.len());
            let name = &tail[..end];
            if names.iter().any(|n| n == name) {
                out.push_str(&format!(
                    "addrspacecast (ptr addrspace({number}) @{name} to ptr)"
                ));
            } else {
                out.push('@');
                out.push_str(name);
            }
            rest = &tail[end..];
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn definitions_move_to_address_space_3_and_uses_are_cast() {
        let ir = "@__gpu_shared_k_0 = dso_local global <{ [1024 x i8] }> undef, align 4\n\
                  @__gpu_shared_k_10 = unnamed_addr global [16 x i8] zeroinitializer, align 16\n\
                  @__gpu_shared_dynamic = external global [0 x i128], align 16\n\
                  @other = global i32 0\n\
                  define void @f() {\n  \
                  %p = getelementptr inbounds i8, ptr @__gpu_shared_k_0, i64 4\n  \
                  store i32 1, ptr @__gpu_shared_k_10, align 4\n  \
                  %q = load i32, ptr @__gpu_shared_dynamic, align 16\n  \
                  ret void\n}\n";
        let out = move_to_shared_space(ir).unwrap().unwrap();
        assert!(out.contains(
            "@__gpu_shared_k_0 = internal addrspace(3) global <{ [1024 x i8] }> undef, align 4\n"
        ), "{out}");
        assert!(
            out.contains(
                "@__gpu_shared_k_10 = internal addrspace(3) global [16 x i8] undef, align 16\n"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "@__gpu_shared_dynamic = external addrspace(3) global [0 x i128], align 16\n"
            ),
            "{out}"
        );
        assert!(
            out.contains("ptr addrspacecast (ptr addrspace(3) @__gpu_shared_k_0 to ptr), i64 4")
        );
        assert!(out.contains(
            "store i32 1, ptr addrspacecast (ptr addrspace(3) @__gpu_shared_k_10 to ptr), align 4"
        ));
        assert!(out.contains("@other = global i32 0"));
    }

    #[test]
    fn modules_without_shared_arrays_are_left_alone() {
        assert_eq!(move_to_shared_space("@x = global i32 0\n").unwrap(), None);
    }

    #[test]
    fn unreadable_definitions_are_errors() {
        let err = move_to_shared_space("@__gpu_shared_k_0 = alias i32, ptr @x\n").unwrap_err();
        assert!(err.contains("__gpu_shared_k_0"), "{err}");
    }
}
