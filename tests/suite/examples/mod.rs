//! Examples run as child processes, each checking itself against the CPU:
//! the ports of numba-cuda's tests and the multi-device examples.

mod multi_device;
mod numba;
