//! Builds this crate's `#[kernel]` functions to PTX for embedding: one
//! module per architecture, sm_70 (every GPU: the FP32 kernels), sm_80
//! (Ampere's `mma.sync`, which `matmul` uses for bf16) and sm_90a (Hopper's
//! own features: the seam for a `wgmma` path); the runtime loads the newest
//! a device runs.
fn main() {
    let builder = gpu_builder::PtxBuilder::this_crate().archs(["sm_70", "sm_80", "sm_90a"]);
    if let Err(e) = builder.build() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
