//! Marks the input pointers of `#[kernel]` entry points `noalias readonly`,
//! so that LLVM loads through them with `ld.global.nc` (the read-only,
//! non-coherent path nvcc uses for `const __restrict__` pointers).
//!
//! `#[kernel]` passes each `&[T]` parameter as a pointer and a length. For
//! each entry point with inputs it also defines a marker static named
//! `__gpu_inputs.<entry>.<parameter count>.<position>...` (the positions of
//! the input pointers among the entry's parameters). In the linked module's
//! textual IR, this pass adds `noalias` and `readonly` to those parameters of
//! `define ptx_kernel ... @<entry>(...)`; the markers themselves are unused
//! and `opt` removes them. Entry points without a marker (kernels written by
//! hand with `extern "ptx-kernel"`) are left alone, and so are entry points
//! with more than one (`#[kernel]` makes one).
//!
//! A marker is a symbol name, like the entry points themselves: defining one
//! by hand takes `#[export_name]` (an unsafe attribute since Rust 2024, and
//! reported by the `unsafe_code` lint before), the same trust every
//! `#[no_mangle]` symbol of the kernel crate already carries.
//!
//! # Why it is sound
//!
//! LLVM's `noalias` on a parameter promises that memory accessed through it
//! and *modified* during the call is not accessed through other pointers;
//! `readonly`, that nothing writes through it. NVPTX then loads through the
//! non-coherent cache, which is correct for memory that nothing writes while
//! the kernel runs. An input's memory is written by nothing during a launch:
//! - the launcher takes an input as a shared borrow (`&DeviceBuffer<T>`,
//!   `DeviceView<T>`) and every output (`DisjointSlice*`, `&[DeviceAtomic<T>]`)
//!   as an exclusive one, so no output of the launch overlaps an input (two
//!   inputs may overlap: both only read);
//! - the kernel body sees the input as `&[T]` with `T: DeviceCopy`, hence
//!   `Copy`, hence without `UnsafeCell`: safe code cannot write through it,
//!   and `&[DeviceAtomic<T>]` is an atomic parameter, never an input (a
//!   `DeviceAtomic` is not `DeviceCopy`, so no alias of it passes as one);
//! - other work on the buffer (other streams, host copies into mapped
//!   memory) is ordered before or after the launch by the buffer's tracking.
//!
//! The pass checks what it relies on from rustc's kernel ABI: the entry has
//! the parameter count the marker names (one PTX parameter per Rust one), and
//! each marked parameter is a generic `ptr`. Where either fails it changes
//! nothing for that entry and returns a warning.

/// The symbol prefix of the markers.
pub const PREFIX: &str = "__gpu_inputs.";

/// What the pass did: the rewritten IR (`None` when it changed nothing) and
/// a warning per entry point it could not mark.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Marked {
    /// The IR with the inputs marked, if any were.
    pub ir: Option<String>,
    /// Entries left unmarked, and why.
    pub warnings: Vec<String>,
}

/// One marker: the entry point, its parameter count, its inputs' positions.
#[derive(Debug, PartialEq, Eq)]
struct Marker {
    entry: String,
    param_count: usize,
    inputs: Vec<usize>,
}

/// `ir` with every marked entry point's inputs `noalias readonly`.
pub fn mark_inputs(ir: &str) -> Marked {
    let markers: Vec<Marker> = ir.lines().filter_map(marker).collect();
    if markers.is_empty() {
        return Marked::default();
    }
    let mut warnings = Vec::new();
    let mut changed = false;
    let mut out = String::with_capacity(ir.len() + 64 * markers.len());
    for line in ir.lines() {
        let entry = defined_entry(line);
        let mut named = markers.iter().filter(|m| Some(m.entry.as_str()) == entry);
        let marker = match (named.next(), named.next()) {
            (Some(m), None) => Some(m),
            (Some(m), Some(_)) => {
                // `#[kernel]` makes one per entry point: another is not its.
                warnings.push(format!(
                    "kernel entry point `{}` has more than one input marker; its inputs are not marked read-only",
                    m.entry
                ));
                None
            }
            _ => None,
        };
        match marker {
            Some(m) => match mark_parameters(line, m) {
                Ok(marked) => {
                    changed = true;
                    out.push_str(&marked);
                }
                Err(why) => {
                    warnings.push(format!(
                        "kernel entry point `{}`: inputs not marked read-only ({why}); its loads stay `ld.global`",
                        m.entry
                    ));
                    out.push_str(line);
                }
            },
            None => out.push_str(line),
        }
        out.push('\n');
    }
    for m in &markers {
        if !ir
            .lines()
            .any(|l| defined_entry(l) == Some(m.entry.as_str()))
        {
            warnings.push(format!(
                "kernel entry point `{}` has an input marker but no definition",
                m.entry
            ));
        }
    }
    Marked {
        ir: changed.then_some(out),
        warnings,
    }
}

/// The marker a line defines: `@__gpu_inputs.<entry>.<count>.<i>... = ...`.
fn marker(line: &str) -> Option<Marker> {
    let rest = line.strip_prefix('@')?.strip_prefix(PREFIX)?;
    let name = &rest[..rest.find([' ', '='])?];
    let mut parts = name.split('.');
    let entry = parts.next()?.to_string();
    let param_count = parts.next()?.parse().ok()?;
    let inputs = parts
        .map(str::parse)
        .collect::<Result<Vec<usize>, _>>()
        .ok()?;
    Some(Marker {
        entry,
        param_count,
        inputs,
    })
}

/// The name of the `ptx_kernel` function a `define` line defines.
fn defined_entry(line: &str) -> Option<&str> {
    if !line.starts_with("define ") || !line.contains(" ptx_kernel ") {
        return None;
    }
    let rest = &line[line.find(" @")? + 2..];
    Some(&rest[..rest.find('(')?])
}

/// The `define` line with the marker's parameters `noalias readonly`.
fn mark_parameters(line: &str, m: &Marker) -> Result<String, String> {
    let open = line
        .find(&format!("@{}(", m.entry))
        .ok_or("no parameter list")?
        + m.entry.len()
        + 2;
    let close = open + matching_paren(&line[open..]).ok_or("unbalanced parameter list")?;
    let params = split_top_level(&line[open..close]);
    if params.len() != m.param_count {
        return Err(format!(
            "{} parameters in the IR where the kernel has {}",
            params.len(),
            m.param_count
        ));
    }
    let mut params: Vec<String> = params.into_iter().map(str::to_string).collect();
    for &i in &m.inputs {
        let param = params
            .get_mut(i)
            .ok_or_else(|| format!("no parameter {i}"))?;
        let rest = param
            .trim_start()
            .strip_prefix("ptr ")
            .ok_or_else(|| format!("parameter {i} is `{}`, not a `ptr`", param.trim()))?;
        if rest.starts_with("addrspace") {
            return Err(format!("parameter {i} is not a generic pointer"));
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        if words.contains(&"writeonly") {
            return Err(format!("parameter {i} is written through"));
        }
        let mut attributes = String::new();
        if !words.contains(&"noalias") {
            attributes.push_str(" noalias");
        }
        if !words.contains(&"readonly") && !words.contains(&"readnone") {
            attributes.push_str(" readonly");
        }
        *param = format!("ptr{attributes} {rest}");
    }
    Ok(format!(
        "{}{}{}",
        &line[..open],
        params.join(", "),
        &line[close..]
    ))
}

/// The position of the `)` closing a list that starts just after its `(`.
fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' if depth == 0 => return Some(i),
            ')' | ']' | '}' | '>' => depth -= 1,
            _ => {}
        }
    }
    None
}

/// The comma-separated items of a parameter list, commas inside brackets
/// (`captures(address, provenance)`, `{ i32, i32 }`) not splitting.
fn split_top_level(s: &str) -> Vec<&str> {
    if s.trim().is_empty() {
        return Vec::new();
    }
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => {
                items.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(s[start..].trim());
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = "@__gpu_inputs.k.5.0.2 = dso_local constant i8 0, align 1\n\
        @__gpu_inputs.k__1d.5.0.2 = dso_local constant i8 0, align 1\n\
        define ptx_kernel void @k(ptr noundef readonly captures(none) %0, i64 noundef %1, ptr noundef captures(address_is_null) %2, i64 %3, ptr noundef writeonly captures(none) %4) unnamed_addr #8 {\n\
        ret void\n}\n\
        define ptx_kernel void @k__1d(ptr noalias noundef readonly %0, i64 %1, ptr %2, i64 %3, ptr %4) #8 {\n\
        ret void\n}\n\
        define ptx_kernel void @other(ptr %0) {\n  ret void\n}\n";

    #[test]
    fn marked_inputs_become_noalias_readonly_and_nothing_else_changes() {
        let marked = mark_inputs(IR);
        assert!(marked.warnings.is_empty(), "{:?}", marked.warnings);
        let ir = marked.ir.expect("changed");
        assert!(ir.contains(
            "define ptx_kernel void @k(ptr noalias noundef readonly captures(none) %0, i64 noundef %1, ptr noalias readonly noundef captures(address_is_null) %2, i64 %3, ptr noundef writeonly captures(none) %4) unnamed_addr #8 {\n"
        ), "{ir}");
        // Attributes already there are not repeated.
        assert!(ir.contains(
            "define ptx_kernel void @k__1d(ptr noalias noundef readonly %0, i64 %1, ptr noalias readonly %2, i64 %3, ptr %4) #8 {\n"
        ), "{ir}");
        // Unmarked entries (and the markers) stay as they were.
        assert!(ir.contains("define ptx_kernel void @other(ptr %0) {\n"));
        assert!(ir.contains("@__gpu_inputs.k.5.0.2 = dso_local constant i8 0, align 1\n"));
    }

    #[test]
    fn an_unexpected_abi_leaves_the_entry_alone_with_a_warning() {
        // One parameter fewer than the marker says (a parameter vanished).
        let ir = "@__gpu_inputs.k.3.0 = constant i8 0\n\
                  define ptx_kernel void @k(ptr %0, i64 %1) {\n  ret void\n}\n";
        let marked = mark_inputs(ir);
        assert_eq!(marked.ir, None);
        assert!(
            marked.warnings[0].contains("2 parameters in the IR where the kernel has 3"),
            "{:?}",
            marked.warnings
        );
        // A marked parameter that is not a pointer.
        let ir = "@__gpu_inputs.k.2.1 = constant i8 0\n\
                  define ptx_kernel void @k(ptr %0, i64 %1) {\n  ret void\n}\n";
        let marked = mark_inputs(ir);
        assert_eq!(marked.ir, None);
        assert!(
            marked.warnings[0].contains("not a `ptr`"),
            "{:?}",
            marked.warnings
        );
    }

    #[test]
    fn an_entry_with_two_markers_is_left_alone() {
        let ir = "@__gpu_inputs.k.2.0 = constant i8 0\n\
                  @__gpu_inputs.k.2.1 = constant i8 0\n\
                  define ptx_kernel void @k(ptr %0, ptr %1) {\n  ret void\n}\n";
        let marked = mark_inputs(ir);
        assert_eq!(marked.ir, None);
        assert!(
            marked.warnings[0].contains("more than one input marker"),
            "{:?}",
            marked.warnings
        );
    }

    #[test]
    fn modules_without_markers_are_left_alone() {
        assert_eq!(
            mark_inputs("define ptx_kernel void @k(ptr %0) {\n}\n"),
            Marked::default()
        );
    }

    #[test]
    fn markers_parse_and_lists_split_at_top_level_commas() {
        assert_eq!(
            marker("@__gpu_inputs.saxpy__1d.7.1.3 = constant i8 0"),
            Some(Marker {
                entry: "saxpy__1d".into(),
                param_count: 7,
                inputs: vec![1, 3]
            })
        );
        assert_eq!(marker("@__gpu_shared_k_0 = global i8 0"), None);
        assert_eq!(
            split_top_level("ptr captures(address, provenance) %0, { i32, i32 } %1, i64 %2"),
            vec![
                "ptr captures(address, provenance) %0",
                "{ i32, i32 } %1",
                "i64 %2"
            ]
        );
    }
}
