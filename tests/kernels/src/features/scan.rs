//! A block-wide inclusive scan through shared memory with the phase token
//! (Hillis and Steele: log2(B) steps of a read phase and a write phase).

use gpu_device::prelude::*;

/// The block size [`block_scan`] runs in.
pub const SCAN_BLOCK: usize = 256;

/// `out[i]` = the sum of `input[b * 256 ..= i]` for the block `b` of `i`:
/// each block's inclusive prefix sums. Launch with blocks of 256 threads
/// (the only shape it runs in), one-dimensional.
#[kernel(block = (SCAN_BLOCK, 1))]
pub fn block_scan(input: &[f32], mut out: DisjointSlice<f32>, block: Block) {
    let i = thread_index();
    let tile = shared_array!(f32; SCAN_BLOCK);
    let mut w = block.require_shape(SCAN_BLOCK as u32, 1, 1);
    let t = w.thread_rank();
    tile.set_own(&mut w, 0, input.get(i.get()).copied().unwrap_or(0.0));
    let mut r = w.sync();
    let mut stride = 1;
    while stride < SCAN_BLOCK {
        // Reading: this slot and the one `stride` before it.
        let sum = match t.checked_sub(stride) {
            Some(before) => tile.get(&r, t) + tile.get(&r, before),
            None => tile.get(&r, t),
        };
        // Writing: this thread's own slot.
        let mut w = r.sync();
        tile.set_own(&mut w, 0, sum);
        r = w.sync();
        stride *= 2;
    }
    out.set(i, tile.get(&r, t));
}
