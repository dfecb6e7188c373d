//! Debug information in the PTX: line tables (`.file` and `.loc`, which
//! compute-sanitizer and the profilers show as Rust source lines) or full
//! DWARF for `cuda-gdb`, chosen with [`PtxBuilder::debug_info`](crate::PtxBuilder::debug_info)
//! or `GPU_PTX_DEBUG`.
//!
//! rustc's `-C debuginfo=line-tables-only` makes LLVM emit `.loc`
//! directives, and also a `.target ..., debug` header with DWARF sections,
//! which CUDA 12's PTX assembler rejects ("Attempted to Dereference Out of
//! Bounds", CUDA 12.9 for sm_70). Line tables need neither: [`finish`]
//! keeps the `.file` and `.loc` directives and drops the rest, as nvcc's
//! `-lineinfo` PTX is. Full debug information keeps it all (CUDA 13's
//! assembler takes it).

/// The environment variable that overrides the debug information in the
/// PTX: `none`, `line-tables` or `full` (see [`DebugInfo`]).
pub const DEBUG_ENV: &str = "GPU_PTX_DEBUG";

/// The first line of a PTX module built with debug information, then
/// `line-tables` or `full`: the runtime reads it to ask the driver's JIT
/// compiler to keep the information (`CU_JIT_GENERATE_LINE_INFO`,
/// `CU_JIT_GENERATE_DEBUG_INFO`).
pub const DEBUG_MARKER: &str = "// gpu-builder debug-info: ";

/// How much debug information the PTX carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DebugInfo {
    /// None (the default): the smallest PTX.
    None,
    /// Line tables (`-C debuginfo=line-tables-only`): `.file` and `.loc`
    /// directives naming each instruction's Rust source line, which
    /// compute-sanitizer and the profilers show (nvcc's `-lineinfo`). The
    /// machine code is the same as without.
    LineTables,
    /// Full debug information (`-C debuginfo=2`), for `cuda-gdb`: breakpoints
    /// on Rust lines, variables (nvcc's `-G`). The runtime asks the JIT
    /// compiler for debug code, which runs much slower.
    Full,
}

impl DebugInfo {
    /// The setting's name in [`DEBUG_ENV`] and [`DEBUG_MARKER`].
    pub fn name(self) -> &'static str {
        match self {
            DebugInfo::None => "none",
            DebugInfo::LineTables => "line-tables",
            DebugInfo::Full => "full",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<DebugInfo> {
        [DebugInfo::None, DebugInfo::LineTables, DebugInfo::Full]
            .into_iter()
            .find(|d| d.name() == name)
    }

    /// rustc's flag for it.
    pub(crate) fn rustc_flag(self) -> &'static str {
        match self {
            DebugInfo::None => "-Cdebuginfo=0",
            DebugInfo::LineTables => "-Cdebuginfo=line-tables-only",
            DebugInfo::Full => "-Cdebuginfo=2",
        }
    }
}

/// The PTX as `llc` wrote it, finished for `debug`: with [`DEBUG_MARKER`]
/// first; for line tables, without the `debug` target and the DWARF
/// sections. An error names what it could not read.
pub fn finish(ptx: &str, debug: DebugInfo) -> Result<String, String> {
    let mut out = String::with_capacity(ptx.len() + 64);
    out.push_str(DEBUG_MARKER);
    out.push_str(debug.name());
    out.push('\n');
    if debug != DebugInfo::LineTables {
        out.push_str(ptx);
        return Ok(out);
    }
    let mut lines = ptx.lines();
    let mut target_seen = false;
    while let Some(line) = lines.next() {
        let trimmed = line.trim();
        if let Some(target) = trimmed.strip_prefix(".target ") {
            target_seen = true;
            let kept: Vec<&str> = target
                .split(',')
                .map(str::trim)
                .filter(|t| *t != "debug")
                .collect();
            out.push_str(&format!(".target {}\n", kept.join(", ")));
            continue;
        }
        if trimmed.starts_with(".section") && trimmed.contains(".debug_") {
            // Skip the section: `{ ... }`, on this line or the next ones.
            let mut depth =
                trimmed.matches('{').count() as i64 - trimmed.matches('}').count() as i64;
            let mut opened = trimmed.contains('{');
            while !opened || depth > 0 {
                let Some(inner) = lines.next() else {
                    return Err(format!("the section `{trimmed}` does not close"));
                };
                opened |= inner.contains('{');
                depth += inner.matches('{').count() as i64 - inner.matches('}').count() as i64;
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    if !target_seen {
        return Err("the PTX has no `.target` line".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "//\n.version 6.3\n.target sm_70, debug\n.address_size 64\n\
        .visible .entry k()\n{\n\t.loc\t1 2 3\n\tret;\n}\n\
        \t.file\t1 \"/w/k/src/lib.rs\"\n\
        \t.section\t.debug_abbrev\n\t{\n.b8 1\n.b8 17\n\t}\n\
        \t.section\t.debug_info\n\t{\n.b32 50\n\t}\n\
        \t.section\t.debug_macinfo\t{\t}\n";

    #[test]
    fn line_tables_keep_loc_and_file_and_drop_dwarf() {
        let out = finish(PTX, DebugInfo::LineTables).unwrap();
        assert!(
            out.starts_with("// gpu-builder debug-info: line-tables\n"),
            "{out}"
        );
        assert!(out.contains(".target sm_70\n"), "{out}");
        assert!(out.contains("\t.loc\t1 2 3\n"), "{out}");
        assert!(out.contains("\t.file\t1 \"/w/k/src/lib.rs\"\n"), "{out}");
        assert!(!out.contains(".section"), "{out}");
        assert!(!out.contains(".b8"), "{out}");
        let full = finish(PTX, DebugInfo::Full).unwrap();
        assert!(full.ends_with(PTX), "{full}");
        assert!(full.starts_with("// gpu-builder debug-info: full\n"));
    }

    #[test]
    fn unreadable_ptx_is_an_error() {
        assert!(finish(
            ".target sm_70, debug\n\t.section\t.debug_info\n\t{\n",
            DebugInfo::LineTables
        )
        .unwrap_err()
        .contains("does not close"));
        assert!(finish(".version 6.3\n", DebugInfo::LineTables)
            .unwrap_err()
            .contains("no `.target`"));
        assert_eq!(
            DebugInfo::from_name("line-tables"),
            Some(DebugInfo::LineTables)
        );
        assert_eq!(DebugInfo::from_name("lines"), None);
    }
}
