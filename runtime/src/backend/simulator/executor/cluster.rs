//! Thread-block clusters in the simulator: the blocks of one cluster run at
//! once, each on an OS thread of its own (as a GPU keeps them co-resident),
//! and meet at each cluster sync ([`ClusterRecord::arrive`]); each block
//! publishes where its shared arrays are, so a peer's `mapa` finds the same
//! array in its memory ([`ClusterRecord::map`]). Clusters are taken one at
//! a time by the launch's workers.

use super::super::worker::Worker;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// What the blocks of one running cluster share.
pub(super) struct ClusterRecord {
    /// The number of blocks of the cluster.
    size: u32,
    state: Mutex<BarrierState>,
    changed: Condvar,
    /// Per rank, the shared memory its block has asked for so far: each
    /// static array's symbol, address and bytes, and the dynamic memory
    /// (under the name [`DYNAMIC`]).
    places: Vec<Mutex<Vec<Place>>>,
}

/// One block's shared array, as published to its cluster.
#[derive(Clone, Copy)]
struct Place {
    symbol: &'static str,
    address: usize,
    bytes: usize,
}

/// The dynamic shared memory's name among a block's places.
const DYNAMIC: &str = "dynamic shared memory";

#[derive(Default)]
struct BarrierState {
    /// Blocks waiting at the current cluster sync.
    arrived: u32,
    /// Blocks that have finished.
    finished: u32,
    /// Cluster syncs completed.
    generation: u64,
}

impl ClusterRecord {
    /// The record of a cluster of `size` blocks, none started.
    pub(super) fn new(size: u32) -> ClusterRecord {
        ClusterRecord {
            size,
            state: Mutex::new(BarrierState::default()),
            changed: Condvar::new(),
            places: (0..size).map(|_| Mutex::new(Vec::new())).collect(),
        }
    }

    /// Block `rank` has the static array `symbol` of `bytes` bytes at
    /// `address` (or, for [`publish_dynamic`](Self::publish_dynamic), its
    /// dynamic shared memory).
    pub(super) fn publish(&self, rank: u32, symbol: &'static str, address: *mut u8, bytes: usize) {
        let mut places = self.places[rank as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let place = Place {
            symbol,
            address: address as usize,
            bytes,
        };
        match places.iter_mut().find(|p| p.symbol == symbol) {
            Some(p) => *p = place,
            None => places.push(place),
        }
    }

    /// Block `rank`'s dynamic shared memory.
    pub(super) fn publish_dynamic(&self, rank: u32, address: *mut u8, bytes: usize) {
        self.publish(rank, DYNAMIC, address, bytes);
    }

    /// The array of block `rank`'s that `address` lies in, if any.
    fn place_of(&self, rank: u32, address: usize) -> Option<Place> {
        self.places[rank as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .copied()
            .find(|p| (p.address..p.address + p.bytes).contains(&address))
    }

    /// The address in block `to`'s shared memory of what `address` is in
    /// block `from`'s: the same byte of the same array. The reason, when
    /// `address` is in none of `from`'s arrays, `to` is outside the cluster
    /// or has not made that array.
    pub(super) fn map(&self, from: u32, address: usize, to: u32) -> Result<usize, String> {
        if to >= self.size {
            return Err(format!(
                "block rank {to} is outside the cluster of {} blocks (mapa of a shared address to another block's)",
                self.size
            ));
        }
        let own = self.place_of(from, address).ok_or_else(|| {
            format!("the address {address:#x} is not in this block's shared memory: only a shared address maps to another block's")
        })?;
        let offset = address - own.address;
        let theirs = self.places[to as usize]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .copied()
            .find(|p| p.symbol == own.symbol)
            .ok_or_else(|| {
                format!(
                    "block rank {to} of the cluster has not made the shared array `{}` yet (it is read before a cluster sync that the block passed after making it)",
                    own.symbol
                )
            })?;
        if offset >= theirs.bytes {
            return Err(format!(
                "byte {offset} of the shared array `{}` is past its {} bytes in block rank {to}",
                own.symbol, theirs.bytes
            ));
        }
        Ok(theirs.address + offset)
    }

    /// A number naming the shared array (and byte) that `address` is in
    /// block `from`'s memory, the same for every block of the cluster: the
    /// hash of the array's symbol, shifted past the offset (below 2^20: no
    /// block has a MiB of shared memory), plus the offset.
    pub(super) fn identity(&self, from: u32, address: usize) -> Result<u64, String> {
        let own = self.place_of(from, address).ok_or_else(|| {
            format!("the address {address:#x} is not in this block's shared memory: only a shared array is exchanged across a cluster")
        })?;
        let offset = (address - own.address) as u64;
        // FNV-1a: the symbols are names, compared by their text (as `map`).
        let hash = own.symbol.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        Ok(hash << 20 | offset)
    }

    /// Every thread of a block has reached a cluster sync: waits until
    /// every block of the cluster has. Fails when a block finished instead
    /// (on a GPU the others would wait forever), or when a block of the
    /// launch failed.
    pub(super) fn arrive(&self, worker: &Worker, failed: &AtomicBool) -> Result<(), String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let generation = state.generation;
        state.arrived += 1;
        if state.arrived == self.size {
            state.arrived = 0;
            state.generation += 1;
            self.changed.notify_all();
            return Ok(());
        }
        loop {
            if state.generation != generation {
                return Ok(());
            }
            if state.finished > 0 && state.arrived + state.finished == self.size {
                return Err(format!(
                    "a cluster barrier is not reached by every block of the cluster ({} of its {} blocks finished first): their threads left the kernel without the barrier pairs every cluster kernel's end takes part in",
                    state.finished, self.size
                ));
            }
            if failed.load(Ordering::Relaxed) {
                return Err(
                    "stopped at a cluster sync: another block of the launch failed first".into(),
                );
            }
            // The other blocks run: no stall of this one.
            worker.progress();
            state = self
                .changed
                .wait_timeout(state, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// A block of the cluster has finished (or failed).
    pub(super) fn block_finished(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.finished += 1;
        self.changed.notify_all();
    }

    /// Waits until every block of the cluster has finished (or failed):
    /// a block's shared memory stays until then, since a peer may still
    /// read it or copy into it (a multicast in flight when the block
    /// failed), as a GPU keeps a cluster's blocks resident together.
    pub(super) fn wait_all_finished(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.finished < self.size {
            state = self
                .changed
                .wait_timeout(state, Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

/// The linear indices in the grid of the blocks of cluster `cluster` (by
/// linear index in the grid of clusters, x fastest), in rank order (x
/// fastest within the cluster, as `%cluster_ctarank`).
pub(super) fn blocks_of(grid: [u32; 3], shape: [u32; 3], cluster: u64) -> Vec<u64> {
    let [gx, gy, _] = grid.map(u64::from);
    let [sx, sy, sz] = shape.map(u64::from);
    let (cx, cy) = (gx / sx, gy / sy);
    let origin = [
        (cluster % cx) * sx,
        ((cluster / cx) % cy) * sy,
        (cluster / (cx * cy)) * sz,
    ];
    let mut blocks = Vec::with_capacity((sx * sy * sz) as usize);
    for z in 0..sz {
        for y in 0..sy {
            for x in 0..sx {
                let [bx, by, bz] = [origin[0] + x, origin[1] + y, origin[2] + z];
                blocks.push(bx + gx * (by + gy * bz));
            }
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_is_its_blocks_in_rank_order() {
        // A 4 x 2 grid of clusters of 2 x 2: cluster 1 is blocks (2..4, 0..2).
        assert_eq!(blocks_of([4, 2, 1], [2, 2, 1], 1), vec![2, 3, 6, 7]);
        assert_eq!(blocks_of([4, 1, 1], [2, 1, 1], 1), vec![2, 3]);
        assert_eq!(blocks_of([2, 2, 2], [1, 1, 2], 3), vec![3, 7]);
    }

    #[test]
    fn an_address_maps_to_the_same_byte_of_a_peers_array() {
        let record = ClusterRecord::new(2);
        let mut a = [0u8; 64];
        let mut b = [0u8; 64];
        record.publish(0, "tile", a.as_mut_ptr(), 64);
        record.publish(1, "tile", b.as_mut_ptr(), 64);
        let mapped = record.map(0, a.as_ptr() as usize + 10, 1).unwrap();
        assert_eq!(mapped, b.as_ptr() as usize + 10);
        assert!(record
            .map(0, a.as_ptr() as usize, 2)
            .unwrap_err()
            .contains("outside the cluster"));
        assert!(record
            .map(0, 8, 1)
            .unwrap_err()
            .contains("not in this block's shared memory"));
    }
}
