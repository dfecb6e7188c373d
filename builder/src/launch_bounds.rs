//! Gives each `#[kernel]` entry point its launch facts as PTX performance
//! directives: a declared block shape (`#[kernel(block = (x, y, z))]`)
//! becomes `.reqntid x, y, z`, launch bounds (`#[kernel(launch_bounds =
//! (max, min))]`) `.maxntid max` and `.minnctapersm min`, as CUDA's
//! `__launch_bounds__` does, and a cluster shape (`#[kernel(cluster = (x,
//! y, z))]`) `.reqnctapercluster x, y, z`, as CUDA's `__cluster_dims__`
//! does. ptxas then budgets registers for that many
//! threads (and that many resident blocks), and LLVM knows the range of
//! `%tid`.
//!
//! The facts come from each instance's interface description, the global
//! `@"__gpu_abi$<entry>"` whose text the device compiled (`block x y z`,
//! `launch_bounds max min`, `cluster x y z`; see `gpu_device::__private::interface`). The
//! pass adds the LLVM function attributes `"nvvm.reqntid"`,
//! `"nvvm.maxntid"`, `"nvvm.minctasm"` and `"nvvm.cluster_dim"` to the instance's entry points
//! (`<entry>`, `<entry>__1d`, `<entry>__2d`) in the linked module's textual
//! IR. (`.reqntid` and `.maxntid` exclude each other in PTX; a declared
//! block is the stronger fact, and the launch bounds' maximum is checked to
//! hold it when the kernel is compiled.)
//!
//! Soundness: the runtime refuses every launch of another block shape
//! (declared blocks) or of more threads (launch bounds) before it reaches
//! the driver, and the driver refuses such launches of these entry points
//! too; the directives only tell the compilers what every launch already
//! satisfies. (`.reqnctapercluster` is also the driver's: it launches the
//! entry point in clusters of that shape only, refusing another cluster
//! dimension.)

/// The interface descriptions' symbol prefix.
const PREFIX: &str = "__gpu_abi$";

/// One instance's facts.
#[derive(Debug, Default, PartialEq, Eq)]
struct Facts {
    entry: String,
    block: Option<[u32; 3]>,
    bounds: Option<[u32; 2]>,
    cluster: Option<[u32; 3]>,
}

impl Facts {
    /// The function attributes of the instance's entry points.
    fn attributes(&self) -> String {
        let mut attrs = String::new();
        if let Some([x, y, z]) = self.block {
            attrs.push_str(&format!(" \"nvvm.reqntid\"=\"{x},{y},{z}\""));
        } else if let Some([max, _]) = self.bounds {
            attrs.push_str(&format!(" \"nvvm.maxntid\"=\"{max}\""));
        }
        if let Some([_, min]) = self.bounds.filter(|[_, min]| *min > 0) {
            attrs.push_str(&format!(" \"nvvm.minctasm\"=\"{min}\""));
        }
        if let Some([x, y, z]) = self.cluster {
            attrs.push_str(&format!(" \"nvvm.cluster_dim\"=\"{x},{y},{z}\""));
        }
        attrs
    }
}

/// The bytes of an LLVM `c"..."` string (`\XX` hex escapes, `\\`).
fn unescape(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() && bytes[i + 1] == b'\\' {
            out.push(b'\\');
            i += 2;
        } else if bytes[i] == b'\\' && i + 2 < bytes.len() {
            match u8::from_str_radix(&s[i + 1..i + 3], 16) {
                Ok(b) => out.push(b),
                Err(_) => out.extend_from_slice(&bytes[i..i + 3]),
            }
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

/// The facts of a description's definition line, if it is one.
fn facts(line: &str) -> Option<Facts> {
    let rest = line.strip_prefix('@')?;
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    let entry = rest.strip_prefix(PREFIX)?;
    let entry = &entry[..entry.find(['"', ' '])?];
    let text_start = line.find("c\"")? + 2;
    let text_end = text_start + line[text_start..].find('"')?;
    let text = String::from_utf8(unescape(&line[text_start..text_end])).ok()?;
    let mut facts = Facts {
        entry: entry.to_string(),
        ..Facts::default()
    };
    for fact in text.lines() {
        let numbers = |prefix: &str| -> Option<Vec<u32>> {
            fact.strip_prefix(prefix)?
                .split(' ')
                .map(|n| n.parse().ok())
                .collect()
        };
        if let Some(n) = numbers("block ") {
            facts.block = n.try_into().ok();
        } else if let Some(n) = numbers("launch_bounds ") {
            facts.bounds = n.try_into().ok();
        } else if let Some(n) = numbers("cluster ") {
            facts.cluster = n.try_into().ok();
        }
    }
    Some(facts)
}

/// The entry point a `define ptx_kernel` line defines.
fn defined_kernel(line: &str) -> Option<&str> {
    if !line.starts_with("define ") || !line.contains(" ptx_kernel ") {
        return None;
    }
    let at = line.find(" @")? + 2;
    let rest = &line[at..];
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    Some(&rest[..rest.find(['"', '('])?])
}

/// `ir` with each `#[kernel]` entry point's launch facts as function
/// attributes; `None` when no instance declares any.
pub fn annotate(ir: &str) -> Option<String> {
    let all: Vec<Facts> = ir
        .lines()
        .filter_map(facts)
        .filter(|f| f.block.is_some() || f.bounds.is_some() || f.cluster.is_some())
        .collect();
    if all.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(ir.len() + 64 * all.len());
    for line in ir.lines() {
        let facts = defined_kernel(line).and_then(|name| {
            let instance = name
                .strip_suffix("__1d")
                .or_else(|| name.strip_suffix("__2d"))
                .unwrap_or(name);
            all.iter().find(|f| f.entry == instance)
        });
        match facts {
            Some(f) => {
                // Function attributes go before the metadata and the body.
                let at = line
                    .find(" !dbg ")
                    .or_else(|| line.rfind(" {"))
                    .unwrap_or(line.len());
                out.push_str(&line[..at]);
                out.push_str(&f.attributes());
                out.push_str(&line[at..]);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = concat!(
        "@\"__gpu_abi$tiles\" = local_unnamed_addr constant [40 x i8] c\"entry tiles\\0Ablock 256 1 1\\0Alaunch_bounds 256 2\\0A\", align 1\n",
        "@\"__gpu_abi$bounded\" = local_unnamed_addr constant [40 x i8] c\"entry bounded\\0Alaunch_bounds 128 0\\0A\", align 1\n",
        "@\"__gpu_abi$plain\" = local_unnamed_addr constant [12 x i8] c\"entry plain\\0A\", align 1\n",
        "define ptx_kernel void @tiles(ptr noundef %0) unnamed_addr #20 !dbg !9858 {\n",
        "define ptx_kernel void @tiles__1d(ptr noundef %0) unnamed_addr #20 {\n",
        "define ptx_kernel void @bounded__2d(ptr %0) #3 {\n",
        "define ptx_kernel void @plain(ptr %0) #3 {\n",
        "define internal void @tiles_helper(ptr %0) #3 {\n",
        "define ptx_kernel void @pairs(ptr %0) #3 {\n",
        "@\"__gpu_abi$pairs\" = local_unnamed_addr constant [40 x i8] c\"entry pairs\\0Ablock 64 1 1\\0Acluster 2 2 1\\0A\", align 1\n",
    );

    #[test]
    fn declared_blocks_and_launch_bounds_become_function_attributes() {
        let out = annotate(IR).expect("changed");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[3],
            "define ptx_kernel void @tiles(ptr noundef %0) unnamed_addr #20 \"nvvm.reqntid\"=\"256,1,1\" \"nvvm.minctasm\"=\"2\" !dbg !9858 {"
        );
        assert_eq!(
            lines[4],
            "define ptx_kernel void @tiles__1d(ptr noundef %0) unnamed_addr #20 \"nvvm.reqntid\"=\"256,1,1\" \"nvvm.minctasm\"=\"2\" {"
        );
        assert_eq!(
            lines[5],
            "define ptx_kernel void @bounded__2d(ptr %0) #3 \"nvvm.maxntid\"=\"128\" {"
        );
        assert_eq!(lines[6], "define ptx_kernel void @plain(ptr %0) #3 {");
        assert_eq!(lines[7], "define internal void @tiles_helper(ptr %0) #3 {");
    }

    #[test]
    fn a_cluster_shape_becomes_the_cluster_dim_attribute() {
        let out = annotate(IR).expect("changed");
        let pairs = out.lines().find(|l| l.contains("@pairs(")).expect("pairs");
        assert_eq!(
            pairs,
            "define ptx_kernel void @pairs(ptr %0) #3 \"nvvm.reqntid\"=\"64,1,1\" \"nvvm.cluster_dim\"=\"2,2,1\" {"
        );
    }

    #[test]
    fn a_module_without_facts_is_left_alone() {
        assert_eq!(
            annotate("@\"__gpu_abi$plain\" = constant [12 x i8] c\"entry plain\\0A\"\n"),
            None
        );
        assert_eq!(unescape("a\\0Ab\\5C\\\\"), b"a\nb\\\\");
    }
}
