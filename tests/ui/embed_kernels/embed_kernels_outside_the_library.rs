// The PTX that `embed_kernels!()` embeds is the one the package's build.rs
// built from the package's library, and every target of the package sees
// the same `OUT_DIR`: in a binary (this case), an example, a test or a
// benchmark, it would put the library's entry points under that crate's
// launchers (a kernel named like one of the library's, with other
// parameters of the same sizes, would run it). So it is an error anywhere
// but in a library.
gpu_device::embed_kernels!();

fn main() {}
