// The attack on the embedded module: a launcher of this crate that names
// `gpu_test_kernels`' module. Its entry point `one_dimensional_witness` takes a
// `*mut u32` and a length; these kernels of the same name take an integer
// address and a length, of the same sizes, so on a GPU the PTX size check
// would pass and the kernel would write wherever the address points. A
// module serves the launchers of the crate that embedded it alone, whether
// it is named by a crate-root re-export (the default `crate::KERNEL_MODULE`)
// or by `module = "..."`.
use gpu_device::prelude::*;

pub use gpu_test_kernels::KERNEL_MODULE;

#[kernel]
pub fn one_dimensional_witness(address: u64, len: usize) {
    let _ = (address, len);
}

mod named {
    use gpu_device::prelude::*;

    #[kernel(module = "gpu_test_kernels::KERNEL_MODULE")]
    pub fn one_dimensional_witness(address: u64, len: usize) {
        let _ = (address, len);
    }
}

fn main() {}
