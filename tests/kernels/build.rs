//! Builds this crate's `#[kernel]` functions to PTX for embedding, with
//! line tables: compute-sanitizer's reports of the tests' kernels name their
//! Rust lines (`tests/ptx.rs` checks the `.loc` directives).
fn main() {
    let builder =
        gpu_builder::PtxBuilder::this_crate().debug_info(gpu_builder::DebugInfo::LineTables);
    if let Err(e) = builder.build() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
