//! Kernels built with line tables (`gpu-test-kernels` is; any kernel crate
//! with `PtxBuilder::debug_info(DebugInfo::LineTables)` or
//! `GPU_PTX_DEBUG=line-tables`) let compute-sanitizer name the Rust line of
//! each report. This program reads a device buffer that nothing wrote
//! (`DeviceBuffer::empty`: allowed, any bits are a `u32`), which is what
//! compute-sanitizer's initcheck reports:
//!
//! ```text
//! compute-sanitizer --tool initcheck target/release/examples/sanitizer_names_rust_lines
//! ========= Uninitialized __global__ memory read of size 4 bytes
//! =========     at read_at__1d+0x...  in .../tests/kernels/src/faults.rs:21
//! ```
//!
//! Built with `GPU_PTX_DEBUG=full`, `cuda-gdb` stops at a Rust line:
//! `cuda-gdb -batch -ex 'break faults.rs:21' -ex run -ex bt <this program>`.
//! Without a tool it runs as any program, on the GPU or the simulator.

use gpu_runtime::{launch, DeviceBuffer, Stream};
use gpu_test_kernels::read_at;

fn main() -> gpu_runtime::Result<()> {
    let stream = Stream::new()?;
    let never_written = DeviceBuffer::<u32>::empty(64)?;
    let mut out = DeviceBuffer::<u32>::zeroed_on(32, &stream)?;
    launch!(read_at[1, 32, stream](&never_written, 5, &mut out))?;
    let got = out.copy_to_host_sync(&stream)?;
    // Every thread read the same element, whatever it held.
    assert!(got.iter().all(|v| *v == got[0]));
    println!("read element 5 of a buffer nothing wrote: {:#x} (compute-sanitizer's initcheck reports the read at the kernel's Rust line)", got[0]);
    Ok(())
}
