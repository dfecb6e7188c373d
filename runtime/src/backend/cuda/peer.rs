//! Peer access and copies between devices on the CUDA driver: context peer
//! access together with access to the peer's memory pool (which context peer
//! access does not cover, and which holds every buffer), and
//! `cuMemcpyPeerAsync` between the devices' primary contexts.

use super::super::{status, DevicePtr, DriverError, StreamHandle};
use super::call::{check, stream};
use super::context::CudaDriver;
use super::ffi::*;
use std::ffi::c_int;

impl CudaDriver {
    pub(super) fn peer_reachable(&self, ordinal: usize, peer: usize) -> Result<bool, DriverError> {
        let (device, peer) = (Self::device_handle(ordinal)?, Self::device_handle(peer)?);
        let mut can = 0;
        // SAFETY: writes one int.
        check("cuDeviceCanAccessPeer", unsafe {
            cuDeviceCanAccessPeer(&mut can, device, peer)
        })?;
        Ok(can != 0)
    }

    /// Lets `device` (its context current) reach `peer`'s memory.
    pub(super) fn enable_peer(&self, device: usize, peer: usize) -> Result<(), DriverError> {
        let target = self.opened(peer, "cuCtxEnablePeerAccess")?;
        // SAFETY: `target.context` is a retained primary context; `device`'s
        // context is current (the caller bound it).
        let code = unsafe { cuCtxEnablePeerAccess(target.context, 0) };
        if code != status::PEER_ACCESS_ALREADY_ENABLED {
            check("cuCtxEnablePeerAccess", code)?;
        }
        // Memory from a pool (`cuMemAllocAsync`) is not covered by context
        // peer access: the peer's pool grants `device` access itself.
        let access = MemAccessDesc {
            location: MemLocation {
                kind: MEM_LOCATION_TYPE_DEVICE,
                id: device as c_int,
            },
            flags: MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        // SAFETY: one descriptor, read during the call; the pool is `peer`'s
        // default pool and the location another device.
        check("cuMemPoolSetAccess", unsafe {
            cuMemPoolSetAccess(target.pool, &access, 1)
        })
    }

    /// The stream's device's context is current (the caller bound it).
    ///
    /// # Safety
    /// As [`Driver::copy_peer_async`](super::super::Driver::copy_peer_async).
    pub(super) unsafe fn copy_peer(
        &self,
        dst: DevicePtr,
        dst_device: usize,
        src: DevicePtr,
        src_device: usize,
        bytes: usize,
        on: StreamHandle,
    ) -> Result<(), DriverError> {
        let to = self.opened(dst_device, "cuMemcpyPeerAsync")?;
        let from = self.opened(src_device, "cuMemcpyPeerAsync")?;
        // SAFETY: both contexts are retained primary contexts; the ranges are
        // forwarded to the caller.
        check("cuMemcpyPeerAsync", unsafe {
            cuMemcpyPeerAsync(dst, to.context, src, from.context, bytes, stream(on))
        })
    }
}
