//! Whole kernels against CPU references: every parameter kind, the classic
//! kernels, issue #20's patterns, tensor cores, `#[vectorize]`, and the
//! codegen controls.

mod classic;
mod codegen_controls;
mod cp_async;
mod parameters_and_features;
mod patterns;
mod tensor_core_data;
mod tensor_cores;
mod vectorize;
mod wgmma;
mod wgmma_tma;
