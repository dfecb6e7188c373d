//! Each device's memory pool, seen and controlled: the pool every
//! [`DeviceBuffer`](crate::DeviceBuffer) is allocated from in stream order
//! (CUDA's default pool of the device, `cuMemAllocAsync`; the simulator's
//! pool with the same reuse and accounting). CuPy's `MemoryPool`, for the
//! pool CUDA keeps.
//!
//! A dropped buffer's memory goes back to the pool, not to the system: a
//! later allocation of the same stream reuses it, and so does one on another
//! stream once the free is ordered before it (it has completed, or the
//! stream waited for an event recorded after it). The pool keeps what it
//! caches (the release threshold starts at "everything"); [`trim_to`]
//! and [`free_all_blocks`] give it back to the system.
//!
//! [`trim_to`]: MemoryPool::trim_to
//! [`free_all_blocks`]: MemoryPool::free_all_blocks

use crate::backend::driver;
use crate::device::Device;
use crate::error::Result;

/// A device's memory pool (CuPy's `cupy.get_default_memory_pool()`, for the
/// device). All handles of one device's pool act on the same pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryPool {
    device: Device,
}

/// How much memory a pool holds, at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes the pool's live allocations use (CUDA's `USED_MEM_CURRENT`,
    /// CuPy's `used_bytes()`).
    pub used_bytes: u64,
    /// Bytes the pool holds from the device: used, and cached for reuse
    /// (CUDA's `RESERVED_MEM_CURRENT`, CuPy's `total_bytes()`). On CUDA the
    /// pool reserves memory in chunks, so this is rounded up past `used`.
    pub reserved_bytes: u64,
}

impl PoolStats {
    /// Bytes cached for reuse: reserved, not used (CuPy's `free_bytes()`).
    pub fn free_bytes(&self) -> u64 {
        self.reserved_bytes.saturating_sub(self.used_bytes)
    }

    /// Bytes the pool holds, used and cached (CuPy's `total_bytes()`): the
    /// reserved bytes.
    pub fn total_bytes(&self) -> u64 {
        self.reserved_bytes
    }
}

impl Device {
    /// The device's memory pool.
    pub fn memory_pool(self) -> MemoryPool {
        MemoryPool { device: self }
    }
}

impl MemoryPool {
    /// The pool of the current device.
    pub fn current() -> Result<MemoryPool> {
        Ok(Device::current()?.memory_pool())
    }

    /// The device the pool belongs to.
    pub fn device(&self) -> Device {
        self.device
    }

    /// How much memory the pool uses and holds now.
    ///
    /// ```no_run
    /// use gpu_runtime::{Device, DeviceBuffer, Stream};
    /// let pool = Device::get(0)?.memory_pool();
    /// let before = pool.stats()?;
    /// let x = DeviceBuffer::<f32>::zeroed_on(1 << 20, &Stream::new()?)?;
    /// assert!(pool.stats()?.used_bytes >= before.used_bytes + (4 << 20));
    /// drop(x);
    /// # Ok::<(), gpu_runtime::Error>(())
    /// ```
    pub fn stats(&self) -> Result<PoolStats> {
        let state = self.device.state()?;
        let (used_bytes, reserved_bytes) = driver()
            .memory_pool_usage(self.device.ordinal())
            .map_err(|e| state.error(e))?;
        Ok(PoolStats {
            used_bytes,
            reserved_bytes,
        })
    }

    /// The cached bytes the pool keeps at a synchronisation (of a stream, an
    /// event or the device) before giving the rest back to the system
    /// (CUDA's `RELEASE_THRESHOLD`). This runtime starts it at `u64::MAX`:
    /// the pool keeps everything, as CuPy's does.
    pub fn release_threshold(&self) -> Result<u64> {
        let state = self.device.state()?;
        driver()
            .memory_pool_release_threshold(self.device.ordinal())
            .map_err(|e| state.error(e))
    }

    /// Sets the release threshold: from the next synchronisation on, the
    /// pool gives cached memory above `bytes` back to the system.
    pub fn set_release_threshold(&self, bytes: u64) -> Result<()> {
        let state = self.device.state()?;
        driver()
            .set_memory_pool_release_threshold(self.device.ordinal(), bytes)
            .map_err(|e| state.error(e))
    }

    /// Gives cached memory back to the system until the pool holds at most
    /// `keep` bytes, or nothing more can go (memory in use, frees still
    /// queued), without waiting for the device (CUDA's `cuMemPoolTrimTo`).
    pub fn trim_to(&self, keep: usize) -> Result<()> {
        let state = self.device.state()?;
        driver()
            .trim_memory_pool(self.device.ordinal(), keep)
            .map_err(|e| state.error(e))
    }

    /// Waits for the device's queued work (queued frees included), then gives
    /// every cached block back to the system (CuPy's `free_all_blocks()`;
    /// [`Device::release_pool_memory`]). Refused during a graph capture on
    /// the device, which a device-wide wait could not outlast.
    pub fn free_all_blocks(&self) -> Result<()> {
        self.device.release_pool_memory()
    }
}
