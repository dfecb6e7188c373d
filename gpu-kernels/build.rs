//! Builds this crate's `#[kernel]` functions to PTX for embedding: one
//! module for sm_70 (every GPU) and one for sm_80 (with the tensor-core
//! example's `mma.sync` kernel); the runtime loads the newest a device runs.
fn main() {
    let builder = gpu_builder::PtxBuilder::this_crate().archs(["sm_70", "sm_80"]);
    if let Err(e) = builder.build() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
