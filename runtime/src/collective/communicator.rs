//! [`Communicator`]: one rank of a communicator, for one process (or thread)
//! per GPU.

use super::call::{queue, Rank, RankArgs};
use super::{error, keep_nvlink_multicast_off, CollectiveElement, UniqueId};
use crate::backend::{driver, CollectiveKind, ReduceOp};
use crate::callback::in_callback;
use crate::deferred::defer;
use crate::device::{self, Device};
use crate::error::{Error, Result};
use crate::memory::{DeviceInput, DeviceOutput, DeviceView};
use crate::stream::Stream;

/// One rank of an NCCL communicator: the shape of one process per GPU, on
/// one host or across hosts.
///
/// Every rank is made from the same [`UniqueId`], which one process creates
/// ([`UniqueId::new`]) and hands to the others (a file, an environment
/// variable, a job launcher); [`Communicator::init_rank`] returns once every
/// rank has joined. Then every rank calls the same collectives in the same
/// order, each with its own buffers and stream; each call returns once
/// queued. One thread drives one rank: two ranks of one communicator driven
/// by one thread wait for each other for ever (use [`Communicators`](super::Communicators)
/// for several GPUs in one thread).
///
/// ```no_run
/// use gpu_runtime::{Communicator, Device, DeviceBuffer, ReduceOp, Stream, UniqueId};
///
/// // In each of `ranks` processes, with RANK set by the launcher and the id
/// // made by rank 0 and shared through a file every process sees:
/// let (rank, ranks) = (0, 2);
/// let id = UniqueId::shared_through_file("/shared/job-42.id", rank, std::time::Duration::from_secs(60))?;
/// let device = Device::get(rank % Device::count()?)?;
/// let mut comm = Communicator::init_rank(&id, ranks, rank, device)?;
/// let stream = Stream::on_device(device)?;
/// let mut gradients = DeviceBuffer::<f32>::zeroed_on(1 << 20, &stream)?;
/// comm.all_reduce_in_place(&mut gradients, ReduceOp::Sum, &stream)?;
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub struct Communicator {
    rank: Rank,
}

impl Communicator {
    /// Rank `rank` of a communicator of `ranks` ranks made from `id`, on
    /// `device`. Returns once every rank has joined (NCCL's
    /// `ncclCommInitRank`).
    pub fn init_rank(id: &UniqueId, ranks: usize, rank: usize, device: Device) -> Result<Self> {
        if rank >= ranks {
            return Err(Error::InvalidCollective {
                operation: "init_rank",
                reason: format!("rank {rank} is not below the number of ranks, {ranks}"),
            });
        }
        keep_nvlink_multicast_off();
        device.state()?;
        let handle = driver()
            .comm_init_rank(device.ordinal(), id.as_array(), ranks, rank)
            .map_err(error)?;
        Ok(Communicator {
            rank: Rank {
                handle,
                device: device.ordinal(),
                rank,
                ranks,
            },
        })
    }

    /// Wraps a communicator made for several ranks of this process.
    pub(super) fn from_rank(rank: Rank) -> Self {
        Communicator { rank }
    }

    pub(super) fn rank_info(&self) -> Rank {
        self.rank
    }

    /// This rank's number, from 0.
    pub fn rank(&self) -> usize {
        self.rank.rank
    }

    /// How many ranks the communicator has.
    pub fn ranks(&self) -> usize {
        self.rank.ranks
    }

    /// The device this rank runs on.
    pub fn device(&self) -> Device {
        Device::get(self.rank.device).expect("the communicator's device was opened")
    }

    fn queue<T, I, O>(
        &mut self,
        operation: &'static str,
        kind: CollectiveKind,
        send: Option<I>,
        recv: O,
        stream: &Stream,
    ) -> Result<()>
    where
        T: CollectiveElement,
        I: DeviceInput<T>,
        O: DeviceOutput<T>,
    {
        queue(
            operation,
            kind,
            &[self.rank],
            vec![RankArgs::new(send, recv, stream)],
        )
    }

    /// Every rank receives, in `recv`, the element-wise reduction of every
    /// rank's `send` (the same length), queued on `stream` (NCCL's `ncclAllReduce`).
    pub fn all_reduce<T: CollectiveElement>(
        &mut self,
        send: impl DeviceInput<T>,
        recv: impl DeviceOutput<T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.queue(
            "all_reduce",
            CollectiveKind::AllReduce(op),
            Some(send),
            recv,
            stream,
        )
    }

    /// [`all_reduce`](Self::all_reduce) with `buffer` as both send and receive buffer.
    pub fn all_reduce_in_place<T: CollectiveElement>(
        &mut self,
        buffer: impl DeviceOutput<T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.queue(
            "all_reduce",
            CollectiveKind::AllReduce(op),
            None::<DeviceView<'_, T>>,
            buffer,
            stream,
        )
    }

    /// Every rank receives, in `recv`, rank `root`'s `send` (the same
    /// length; read on the root only), queued on `stream` (NCCL's `ncclBroadcast`).
    pub fn broadcast<T: CollectiveElement>(
        &mut self,
        send: impl DeviceInput<T>,
        recv: impl DeviceOutput<T>,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.queue(
            "broadcast",
            CollectiveKind::Broadcast { root },
            Some(send),
            recv,
            stream,
        )
    }

    /// Every rank's `buffer` receives rank `root`'s.
    pub fn broadcast_in_place<T: CollectiveElement>(
        &mut self,
        buffer: impl DeviceOutput<T>,
        root: usize,
        stream: &Stream,
    ) -> Result<()> {
        self.queue(
            "broadcast",
            CollectiveKind::Broadcast { root },
            None::<DeviceView<'_, T>>,
            buffer,
            stream,
        )
    }

    /// Reduces every rank's `send` (`ranks()` blocks of `recv.len()`
    /// elements) element-wise, and rank `r` receives block `r` of the result
    /// in `recv`, queued on `stream` (NCCL's `ncclReduceScatter`).
    pub fn reduce_scatter<T: CollectiveElement>(
        &mut self,
        send: impl DeviceInput<T>,
        recv: impl DeviceOutput<T>,
        op: ReduceOp,
        stream: &Stream,
    ) -> Result<()> {
        self.queue(
            "reduce_scatter",
            CollectiveKind::ReduceScatter(op),
            Some(send),
            recv,
            stream,
        )
    }

    /// Every rank receives, in `recv` (`ranks()` blocks of `send.len()`
    /// elements), every rank's `send`, block `r` from rank `r`, queued on
    /// `stream` (NCCL's `ncclAllGather`).
    pub fn all_gather<T: CollectiveElement>(
        &mut self,
        send: impl DeviceInput<T>,
        recv: impl DeviceOutput<T>,
        stream: &Stream,
    ) -> Result<()> {
        self.queue(
            "all_gather",
            CollectiveKind::AllGather,
            Some(send),
            recv,
            stream,
        )
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        let (handle, ordinal) = (self.rank.handle, self.rank.device);
        let release = move || {
            // A context lost to a kernel fault took the communicator's work along.
            if device::state(ordinal).is_ok() {
                // NCCL waits for the queued collectives first.
                let _ = driver().comm_destroy(handle);
            }
        };
        if in_callback() {
            defer(Box::new(release));
        } else {
            release();
        }
    }
}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Communicator(rank {} of {} on device {})",
            self.rank.rank, self.rank.ranks, self.rank.device
        )
    }
}
