// Arbitrary PTX under a typed launcher could do anything: wrapping PTX is
// an explicit promise (`unsafe`) that it came from the project's build.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule =
    gpu_runtime::EmbeddedModule::new("mine", ".visible .entry k() { ret; }");

fn main() {}
