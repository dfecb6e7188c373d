//! The array operations of `gpu-ops`: sums, element-wise expressions and
//! device-wide scans.

mod scans;
mod sum_and_elementwise;
