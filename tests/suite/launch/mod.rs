//! Launches refused before they run: bad configurations and resources, each
//! an error naming the kernel and the limit, and host and device compiling a
//! kernel differently.

mod errors;
mod host_device_agreement;
