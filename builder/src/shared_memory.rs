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
    let mut names = Vec::new();
    let mut out = String::with_capacity(ir.len() + 1024);
    for line in ir.lines() {
        match shared_definition(line)? {
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
    Ok(Some(wrap_uses(&out, &names)))
}

/// A definition line `@__gpu_shared_... = ...`: its name and the line that
/// defines it in address space 3.
fn shared_definition(line: &str) -> Result<Option<(String, String)>, String> {
    let Some(rest) = line.strip_prefix('@') else {
        return Ok(None);
    };
    if !rest.starts_with(PREFIX) {
        return Ok(None);
    }
    let end = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
    let name = &rest[..end];
    let Some(definition) = rest[end..].trim_start().strip_prefix('=') else {
        return Ok(None);
    };
    let unreadable =
        || format!("cannot move `@{name}` to shared memory: unexpected definition `{line}`");
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
    let rewritten = if external {
        format!("@{name} = external addrspace(3) global {ty}{align}")
    } else {
        format!("@{name} = internal addrspace(3) global {ty} undef{align}")
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

/// Every use `@name` (not the definition) becomes a cast of the address
/// space 3 global to a generic pointer.
fn wrap_uses(ir: &str, names: &[String]) -> String {
    let mut out = String::with_capacity(ir.len() + 256 * names.len());
    for line in ir.lines() {
        let is_definition = names
            .iter()
            .any(|n| line.starts_with(&format!("@{n} ")) || line.starts_with(&format!("@{n}=")));
        if is_definition || !line.contains(PREFIX) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut rest = line;
        while let Some(at) = rest.find(&format!("@{PREFIX}")) {
            out.push_str(&rest[..at]);
            let tail = &rest[at + 1..];
            let end = tail.find(|c: char| !is_name_char(c)).unwrap_or(tail.len());
            let name = &tail[..end];
            if names.iter().any(|n| n == name) {
                out.push_str(&format!("addrspacecast (ptr addrspace(3) @{name} to ptr)"));
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
