//! The kernel of `examples/numba_toolbox.rs`: a Numba kernel that uses
//! `print`, `cuda.fp16`, `cuda.syncthreads_count` and a constant array
//! (`benches/python/numba_toolbox.py`), ported statement by statement.

use gpu_device::prelude::*;
use gpu_device::{f16, println};

gpu_device::constant! {
    /// The smoothing filter's weights: `cuda.const.array_like(WEIGHTS)`.
    pub static WEIGHTS: [f32; 3];
}

/// Numba's `smooth_and_count`: each interior element becomes the weighted
/// sum of its neighbourhood in half precision (`cuda.fp16.hfma`), each
/// block counts its values above `threshold` (`cuda.syncthreads_count`),
/// and its thread 0 prints the count. `counts[i]` is the count of thread
/// `i`'s block (Numba's version writes it once per block).
#[kernel]
pub fn smooth_and_count(
    x: &[f16],
    threshold: f32,
    mut out: DisjointSlice<f16>,
    mut counts: DisjointSlice<u32>,
) {
    let w = WEIGHTS.get(); //                       w = cuda.const.array_like(WEIGHTS)
    let i = thread_index(); //                      i = cuda.grid(1)
    let mut v = f16::ZERO; //                       v = np.float16(0.0)
    if (1..x.len().saturating_sub(1)).contains(&i.get()) {
        let mut acc = f16::ZERO; //                 acc = np.float16(0.0)
        for k in 0..3 {
            // acc = cuda.fp16.hfma(np.float16(w[k]), x[i - 1 + k], acc)
            acc = f16::from_f32(w[k]).mul_add(x[i.get() - 1 + k], acc);
        }
        out.set(i, acc); //                         out[i] = acc
        v = acc;
    }
    let above = sync_threads_count(v.to_f32() > threshold);
    counts.set(i, above);
    if thread_idx().x == 0 {
        // print("block", cuda.blockIdx.x, "counts", above, "of", cuda.blockDim.x, "above", threshold)
        println!(
            "block {} counts {} of {} above {:.6}",
            block_idx().x,
            above,
            block_dim().x,
            threshold
        );
    }
}
