//! The device copies of encoded tensor maps, shared by every map that
//! encodes to the same words (the same device, buffer address, layout and
//! extra words). A map made again over the same buffer, as
//! `gpu_ops::matmul` makes two each call, reuses the copy instead of
//! writing a new one and waiting for that copy (a round trip to the device
//! each time). A copy is written once, read by kernels only, and its
//! content is a function of its key alone, so any map of that key may use
//! it.

use crate::{DeviceBuffer, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The most copies kept for reuse; past it, those no map holds any more
/// are dropped (each tracked free waits for its readers).
const KEPT: usize = 256;

/// A device and the words of an encoded map.
type Key = (usize, Vec<u64>);

fn kept() -> MutexGuard<'static, HashMap<Key, Arc<DeviceBuffer<u64>>>> {
    static KEPT_COPIES: OnceLock<Mutex<HashMap<Key, Arc<DeviceBuffer<u64>>>>> = OnceLock::new();
    // A panic while holding the lock leaves the map whole (each insert is
    // one call): its contents stay valid.
    KEPT_COPIES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The device copy of `words` on `device`: a kept one, or one `write`
/// makes (written completely before it returns), kept for later maps.
pub(crate) fn device_copy(
    device: usize,
    words: Vec<u64>,
    write: impl FnOnce(&[u64]) -> Result<DeviceBuffer<u64>>,
) -> Result<Arc<DeviceBuffer<u64>>> {
    let key = (device, words);
    if let Some(copy) = kept().get(&key) {
        return Ok(Arc::clone(copy));
    }
    // Written outside the lock: a copy waits for the device.
    let copy = Arc::new(write(&key.1)?);
    let mut kept = kept();
    if kept.len() >= KEPT {
        kept.retain(|_, copy| Arc::strong_count(copy) > 1);
    }
    if kept.len() < KEPT {
        kept.entry(key).or_insert_with(|| Arc::clone(&copy));
    }
    Ok(copy)
}
