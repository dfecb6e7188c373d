//! Peer access: kernels on one device reading and writing another device's
//! memory, directly over NVLink or PCIe.
//!
//! A launch with a buffer of another device is refused
//! ([`Error::WrongDevice`]) until [`Device::enable_peer_access`] has let the
//! launch's device reach the buffer's. Access is one way: device 0 reaching
//! device 1's memory says nothing of device 1 reaching device 0's. Once
//! enabled, it stays enabled for the life of the process (this crate never
//! disables it, so no launch can find it gone). Copies between devices
//! ([`DeviceBuffer::copy_from_device`](crate::DeviceBuffer::copy_from_device)
//! with a buffer of another device) need no peer access from the user: where
//! the hardware has a peer link, the first copy between two devices enables
//! the driver's peer access for copies (not for launches, which still need
//! [`Device::enable_peer_access`]), so copies take the direct path and are
//! queued like any other. Without it, CUDA stages a copy through host memory,
//! and the call may wait on the host for the copy's source (see README,
//! "CuPy/Numba parity").

use crate::backend::{driver, status, MAX_DEVICES};
use crate::device::Device;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU16, Ordering};

/// Bit `p` of entry `d`: device `d` may reach device `p`'s memory.
static ENABLED: [AtomicU16; MAX_DEVICES] = [const { AtomicU16::new(0) }; MAX_DEVICES];

/// Bit `p` of entry `d`: copies on `d`'s streams reach device `p`'s memory
/// directly (the driver's peer access is on), or the hardware has no link
/// (asked once).
static COPY_PATH_KNOWN: [AtomicU16; MAX_DEVICES] = [const { AtomicU16::new(0) }; MAX_DEVICES];

/// Makes copies on `device`'s streams reach `peer`'s memory directly where
/// the hardware can: the driver's peer access, enabled once, without letting
/// launches use `peer`'s buffers (that stays [`Device::enable_peer_access`]'s
/// to grant). A direct copy is queued on its stream and returns at once; a
/// staged one (no peer link) waits on the host for its source.
pub(crate) fn prepare_copy_path(device: usize, peer: usize) -> Result<()> {
    if device == peer || device >= MAX_DEVICES || peer >= MAX_DEVICES {
        return Ok(());
    }
    if is_enabled(device, peer)
        || COPY_PATH_KNOWN[device].load(Ordering::Acquire) & (1 << peer) != 0
    {
        return Ok(());
    }
    if driver().can_access_peer(device, peer)? {
        match driver().enable_peer_access(device, peer) {
            Ok(()) => {}
            // No link after all: the copy is staged.
            Err(e) if e.code == status::PEER_ACCESS_UNSUPPORTED => {}
            Err(e) => return Err(e.into()),
        }
    }
    COPY_PATH_KNOWN[device].fetch_or(1 << peer, Ordering::AcqRel);
    Ok(())
}

/// Whether kernels on `device` may use memory of `peer` (always for itself).
#[inline]
pub(crate) fn is_enabled(device: usize, peer: usize) -> bool {
    device == peer
        || (device < MAX_DEVICES
            && peer < MAX_DEVICES
            && ENABLED[device].load(Ordering::Acquire) & (1 << peer) != 0)
}

impl Device {
    /// Whether the hardware lets this device reach `peer`'s memory directly
    /// (CUDA's `cuDeviceCanAccessPeer`); `true` for the device itself.
    pub fn can_access_peer(self, peer: Device) -> Result<bool> {
        if self == peer {
            return Ok(true);
        }
        self.state()?;
        Ok(driver().can_access_peer(self.ordinal(), peer.ordinal())?)
    }

    /// Lets kernels on this device read and write `peer`'s memory (CUDA's
    /// `cuCtxEnablePeerAccess`, and access to `peer`'s memory pool, which
    /// holds every [`DeviceBuffer`](crate::DeviceBuffer)), and makes copies
    /// between the two take the direct path. One way: call it on `peer` too
    /// for the other direction. Enabling it again, or for the device itself,
    /// does nothing. Where the hardware has no peer link between the two
    /// devices, the error is [`Error::PeerAccessUnsupported`].
    pub fn enable_peer_access(self, peer: Device) -> Result<()> {
        if self.peer_access_enabled(peer) {
            return Ok(());
        }
        if !self.can_access_peer(peer)? {
            return Err(Error::PeerAccessUnsupported {
                device: self.ordinal(),
                peer: peer.ordinal(),
            });
        }
        let state = self.state()?;
        match driver().enable_peer_access(self.ordinal(), peer.ordinal()) {
            Ok(()) => {}
            Err(e) if e.code == status::PEER_ACCESS_UNSUPPORTED => {
                return Err(Error::PeerAccessUnsupported {
                    device: self.ordinal(),
                    peer: peer.ordinal(),
                })
            }
            Err(e) => return Err(state.error(e)),
        }
        ENABLED[self.ordinal()].fetch_or(1 << peer.ordinal(), Ordering::AcqRel);
        Ok(())
    }

    /// Whether [`enable_peer_access`](Self::enable_peer_access) has let this
    /// device reach `peer`'s memory (`true` for the device itself).
    pub fn peer_access_enabled(self, peer: Device) -> bool {
        is_enabled(self.ordinal(), peer.ordinal())
    }
}
