//! Examples run as child processes, each checking itself against the CPU:
//! the ports of numba-cuda's tests, the multi-device examples and the
//! tensor-core example.

mod multi_device;
mod numba;
mod tensor_cores;
