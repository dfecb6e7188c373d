//! A Numba kernel that uses `print`, `cuda.fp16`, `cuda.syncthreads_count`
//! and a constant array (`benches/python/numba_toolbox.py`), ported: the
//! kernel is `gpu_kernels::numba_toolbox::smooth_and_count`.
//!
//! | Numba | here |
//! |---|---|
//! | `WEIGHTS = np.array(..., np.float32)`, `cuda.const.array_like(WEIGHTS)` | `constant! { static WEIGHTS: [f32; 3]; }`, `WEIGHTS.set(..)` then `WEIGHTS.get()` |
//! | `np.float16`, `cuda.fp16.hfma(a, b, c)` | `gpu_device::f16`, `a.mul_add(b, c)` |
//! | `cuda.syncthreads_count(p)` | `sync_threads_count(p)` |
//! | `print("block", ..., threshold)` | `println!("block {} ... {:.6}", ...)` (Numba prints floats as `%f`) |
//!
//! Both print the same lines (the kernel's in any order on a GPU): compare
//! `cargo run --release --example numba_toolbox | sort` with
//! `python3 benches/python/numba_toolbox.py | sort` on the GPU machine.

use gpu_device::f16;
use gpu_kernels::numba_toolbox::{smooth_and_count, WEIGHTS};
use gpu_runtime::{launch, DeviceBuffer, SetConstant, Stream};
use std::error::Error;
use std::process::ExitCode;

const N: usize = 300;
const BLOCK: usize = 128;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("numba_toolbox: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let stream = Stream::new()?;
    // x = (np.arange(N) % 7).astype(np.float16) * np.float16(0.25)
    let x: Vec<f16> = (0..N)
        .map(|i| f16::from_f32((i % 7) as f32) * f16::from_f32(0.25))
        .collect();
    WEIGHTS.set([0.25, 0.5, 0.25], &stream)?;
    let dx = DeviceBuffer::to_device_sync(&x, &stream)?;
    let mut out = DeviceBuffer::<f16>::zeroed_on(N, &stream)?;
    let mut counts = DeviceBuffer::<u32>::zeroed_on(N, &stream)?;
    let blocks = N.div_ceil(BLOCK);
    launch!(smooth_and_count[blocks, BLOCK, stream](&dx, 0.5f32, &mut out, &mut counts))?;
    let out = out.copy_to_host_sync(&stream)?; // the kernel's lines arrive here
    let counts = counts.copy_to_host_sync(&stream)?;
    let per_block: Vec<String> = (0..blocks).map(|b| counts[b * BLOCK].to_string()).collect();
    println!("counts {}", per_block.join(" "));
    let first: Vec<String> = out[..12]
        .iter()
        .map(|v| format!("{:.4}", v.to_f32()))
        .collect();
    println!("out {}", first.join(" "));
    println!("sum {:.4}", out.iter().map(|v| v.to_f32()).sum::<f32>());
    Ok(())
}
