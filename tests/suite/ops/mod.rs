//! The array operations of `gpu-ops`: sums, element-wise expressions,
//! device-wide scans and matrix products.

mod matmul;
mod scans;
mod sum_and_elementwise;
