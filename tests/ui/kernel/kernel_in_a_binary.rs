// A kernel written in a binary (src/main.rs), with no `embed_kernels!()`:
// build.rs builds the library's kernels only, so this one has no module to
// load from. The error names the fix, not "cannot find value `KERNEL_MODULE`".
use gpu_device::prelude::*;

#[kernel]
pub fn scale(a: f32, mut out: DisjointSlice<f32>) {
    out.set(thread_index(), a);
}

fn main() {}
