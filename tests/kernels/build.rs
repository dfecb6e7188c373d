//! Builds this crate's `#[kernel]` functions to PTX for embedding, with
//! line tables: compute-sanitizer's reports of the tests' kernels name their
//! Rust lines (`tests/toolchain/ptx.rs` checks the `.loc` directives). One module per
//! architecture: sm_70 (every GPU), sm_80 (Ampere's warp-level MMA) and
//! sm_90a (Hopper's own features); the runtime loads the newest a device
//! runs.
fn main() {
    let builder = gpu_builder::PtxBuilder::this_crate()
        .archs(["sm_70", "sm_80", "sm_90a"])
        .debug_info(gpu_builder::DebugInfo::LineTables);
    if let Err(e) = builder.build() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
