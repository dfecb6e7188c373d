//! Examples run as child processes, each checking itself against the CPU:
//! the ports of numba-cuda's tests and of CuPy's stream guides, the
//! multi-device examples and the tensor-core example.

mod cupy;
mod multi_device;
mod numba;
mod tensor_cores;
