//! A privatised 256-bin histogram.

use gpu_device::prelude::*;

/// Counts `input`'s values masked to their low 8 bits into `bins` (256
/// counters, which the caller zeroes): each block counts into its own 256
/// shared atomic counters (`atom.shared.add`), then adds each non-zero one to
/// `bins` with one global atomic.
///
/// A grid-stride loop with four independent loads in flight per thread:
/// launch with blocks of 256 threads (the only shape it runs in: one shared
/// counter per thread, as `benches/cuda/kernels.cu` has) and as many blocks
/// as the device holds at once (any one-dimensional grid is correct).
#[kernel(block = 256)]
pub fn histogram256(input: &[u32], bins: &[DeviceAtomic<u32>], block: Block) {
    let local = shared_array!(DeviceAtomic<u32>; 256);
    let mut w = block;
    local.fill(&mut w, |_| DeviceAtomic::new(0));
    let r = w.sync();
    let n = input.len();
    let stride = gridsize_1d();
    let mut i = grid_1d();
    while i < n && n - i > 3 * stride {
        let (v0, v1, v2, v3) = (
            input[i],
            input[i + stride],
            input[i + 2 * stride],
            input[i + 3 * stride],
        );
        local.get_ref(&r, (v0 & 0xff) as usize).fetch_add(1);
        local.get_ref(&r, (v1 & 0xff) as usize).fetch_add(1);
        local.get_ref(&r, (v2 & 0xff) as usize).fetch_add(1);
        local.get_ref(&r, (v3 & 0xff) as usize).fetch_add(1);
        i += 4 * stride;
    }
    while i < n {
        local.get_ref(&r, (input[i] & 0xff) as usize).fetch_add(1);
        i += stride;
    }
    let mut w = r.sync();
    let mut k = 0;
    while let Some(slot) = w.own_slot(k, 256) {
        let count = *local.own_mut(&mut w, k).get_mut();
        if count != 0 {
            if let Some(bin) = bins.get(slot) {
                bin.fetch_add(count);
            }
        }
        k += 1;
    }
}
