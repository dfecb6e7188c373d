//! [`Communicators`]: a communicator with one rank per device, all driven by
//! this process.

use super::call::{queue, RankArgs};
use super::communicator::Communicator;
use super::{error, keep_nvlink_multicast_off, CollectiveElement};
use crate::backend::{driver, CollectiveKind, ReduceOp};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::{DeviceInput, DeviceOutput, DeviceView};
use crate::stream::Stream;

/// A communicator with one rank per device, all in this process (NCCL's
/// `ncclCommInitAll`): rank `i` runs on the `i`-th device given.
///
/// Each collective takes every rank's buffers and streams at once, in rank
/// order, and queues them as one NCCL group; it returns once queued. Buffers
/// come as iterators, so a `Vec<DeviceBuffer<T>>` is passed as
/// `buffers.iter()` (inputs) or `buffers.iter_mut()` (outputs).
///
/// ```no_run
/// use gpu_runtime::{Communicators, Device, DeviceBuffer, ReduceOp, Stream};
///
/// let devices = Device::all()?;
/// let mut comms = Communicators::new(&devices)?;
/// let streams = devices.iter().map(|&d| Stream::on_device(d)).collect::<Result<Vec<_>, _>>()?;
/// let mut grads = streams
///     .iter()
///     .map(|s| DeviceBuffer::to_device_sync(&[1.0f32; 1024], s))
///     .collect::<Result<Vec<_>, _>>()?;
/// comms.all_reduce_in_place(grads.iter_mut(), ReduceOp::Sum, &streams)?;
/// let sum = grads[0].copy_to_host_sync(&streams[0])?;
/// assert!(sum.iter().all(|&x| x == devices.len() as f32));
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub struct Communicators {
    ranks: Vec<Communicator>,
}

impl Communicators {
    /// One rank per device of `devices` (each listed once), rank `i` on `devices[i]`.
    pub fn new(devices: &[Device]) -> Result<Self> {
        let invalid = |reason: String| Error::InvalidCollective {
            operation: "Communicators::new",
            reason,
        };
        if devices.is_empty() {
            return Err(invalid("a communicator needs at least one device".into()));
        }
        for (i, d) in devices.iter().enumerate() {
            if devices[..i].contains(d) {
                return Err(invalid(format!(
                    "device {} is listed twice: each rank needs a device of its own",
                    d.ordinal()
                )));
            }
        }
        keep_nvlink_multicast_off();
        for d in devices {
            d.state()?;
        }
        let ordinals: Vec<usize> = devices.iter().map(|d| d.ordinal()).collect();
        let handles = driver().comm_init_all(&ordinals).map_err(error)?;
        Ok(Communicators {
            ranks: handles
                .into_iter()
                .enumerate()
                .map(|(rank, handle)| {
                    Communicator::from_rank(super::call::Rank {
                        handle,
                        device: ordinals[rank],
                        rank,
                        ranks: ordinals.len(),
                    })
                })
                .collect(),
        })
    }

    /// One rank per device of this machine, in ordinal order.
    pub fn all_devices() -> Result<Self> {
        Communicators::new(&Device::all()?)
    }

    /// The number of ranks.
    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    /// Whether there are no ranks (never: a communicator has at least one).
    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    /// The ranks' devices, in rank order.
    pub fn devices(&self) -> Vec<Device> {
        self.ranks.iter().map(Communicator::device).collect()
    }

    fn queue<T, I, O>(
        &mut self,
        operation: &'static str,
        kind: CollectiveKind,
        sends: Option<Vec<I>>,
        recvs: Vec<O>,
        streams: &[Stream],
    ) -> Result<()>
    where
        T: CollectiveElement,
        I: DeviceInput<T>,
        O: DeviceOutput<T>,
    {
        let n = self.ranks.len();
        let counts = [
            ("send buffers", sends.as_ref().map_or(n, Vec::len)),
            ("receive buffers", recvs.len()),
            ("streams", streams.len()),
        ];
        for (what, count) in counts {
            if count != n {
                return Err(Error::InvalidCollective {
                    operation,
                    reason: format!(
                        "{count} {what} for {n} ranks: give one per rank, in rank order"
                    ),
                });
            }
        }
        let mut sends = sends.map(Vec::into_iter);
        let args = recvs
            .into_iter()
            .zip(streams)
            .map(|(recv, stream)| {
                RankArgs::new(sends.as_mut().and_then(Iterator::next), recv, stream)
            })
            .collect();
        let ranks: Vec<_> = self.ranks.iter().map(Communicator::rank_info).collect();
        queue(operation, kind, &ranks, args)
    }

    /// Every rank receives the element-wise reduction of every rank's send
    /// buffer: one send buffer, receive buffer and stream per rank, in rank order.
    pub fn all_reduce<T, I, O>(
        &mut self,
        sends: impl IntoIterator<Item = I>,
        recvs: impl IntoIterator<Item = O>,
        op: ReduceOp,
        streams: &[Stream],
    ) -> Result<()>
    where
        T: CollectiveElement,
        I: DeviceInput<T>,
        O: DeviceOutput<T>,
    {
        self.queue(
            "all_reduce",
            CollectiveKind::AllReduce(op),
            Some(sends.into_iter().collect()),
            recvs.into_iter().collect(),
            streams,
        )
    }

    /// [`all_reduce`](Self::all_reduce) with each rank's buffer as both send
    /// and receive buffer.
    pub fn all_reduce_in_place<T, O>(
        &mut self,
        buffers: impl IntoIterator<Item = O>,
        op: ReduceOp,
        streams: &[Stream],
    ) -> Result<()>
    where
        T: CollectiveElement,
        O: DeviceOutput<T>,
    {
        self.queue(
            "all_reduce",
            CollectiveKind::AllReduce(op),
            None::<Vec<DeviceView<'_, T>>>,
            buffers.into_iter().collect(),
            streams,
        )
    }

    /// Every rank receives rank `root`'s send buffer (read on the root only).
    pub fn broadcast<T, I, O>(
        &mut self,
        sends: impl IntoIterator<Item = I>,
        recvs: impl IntoIterator<Item = O>,
        root: usize,
        streams: &[Stream],
    ) -> Result<()>
    where
        T: CollectiveElement,
        I: DeviceInput<T>,
        O: DeviceOutput<T>,
    {
        self.queue(
            "broadcast",
            CollectiveKind::Broadcast { root },
            Some(sends.into_iter().collect()),
            recvs.into_iter().collect(),
            streams,
        )
    }

    /// Every rank's buffer receives rank `root`'s.
    pub fn broadcast_in_place<T, O>(
        &mut self,
        buffers: impl IntoIterator<Item = O>,
        root: usize,
        streams: &[Stream],
    ) -> Result<()>
    where
        T: CollectiveElement,
        O: DeviceOutput<T>,
    {
        self.queue(
            "broadcast",
            CollectiveKind::Broadcast { root },
            None::<Vec<DeviceView<'_, T>>>,
            buffers.into_iter().collect(),
            streams,
        )
    }

    /// Reduces every rank's send buffer (one block per rank) element-wise;
    /// rank `r` receives block `r` of the result.
    pub fn reduce_scatter<T, I, O>(
        &mut self,
        sends: impl IntoIterator<Item = I>,
        recvs: impl IntoIterator<Item = O>,
        op: ReduceOp,
        streams: &[Stream],
    ) -> Result<()>
    where
        T: CollectiveElement,
        I: DeviceInput<T>,
        O: DeviceOutput<T>,
    {
        self.queue(
            "reduce_scatter",
            CollectiveKind::ReduceScatter(op),
            Some(sends.into_iter().collect()),
            recvs.into_iter().collect(),
            streams,
        )
    }

    /// Every rank receives every rank's send buffer, block `r` from rank `r`.
    pub fn all_gather<T, I, O>(
        &mut self,
        sends: impl IntoIterator<Item = I>,
        recvs: impl IntoIterator<Item = O>,
        streams: &[Stream],
    ) -> Result<()>
    where
        T: CollectiveElement,
        I: DeviceInput<T>,
        O: DeviceOutput<T>,
    {
        self.queue(
            "all_gather",
            CollectiveKind::AllGather,
            Some(sends.into_iter().collect()),
            recvs.into_iter().collect(),
            streams,
        )
    }
}

impl std::fmt::Debug for Communicators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.ranks.iter().map(|c| c.rank_info().device))
            .finish()
    }
}
