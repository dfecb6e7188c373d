//! Builds this crate's `#[kernel]` functions to PTX for embedding.
fn main() {
    if let Err(e) = gpu_builder::PtxBuilder::this_crate().build() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
