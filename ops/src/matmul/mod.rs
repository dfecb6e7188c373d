// sm_80's: in the PTX of sm_80 and later only (the kernel declares it too).
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_80"))]
pub mod gemm_tc;
pub mod sgemm;
