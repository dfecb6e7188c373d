//! One collective call, for every rank this process drives: the checks, the
//! tracking of the buffers, and the call into the driver.

use super::{error, CollectiveElement};
use crate::backend::{driver, Collective, CollectiveKind, CommHandle};
use crate::device::DeviceState;
use crate::error::{Error, Result};
use crate::last_kernel::KernelId;
use crate::memory::{DeviceInput, DeviceOutput};
use crate::stream::Stream;
use std::marker::PhantomData;
use std::sync::OnceLock;

/// A rank of a communicator, as a call needs it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rank {
    pub(super) handle: CommHandle,
    pub(super) device: usize,
    pub(super) rank: usize,
    pub(super) ranks: usize,
}

/// One rank's buffers and stream.
pub(super) struct RankArgs<'s, T, I, O> {
    /// `None`: in place (the receive buffer is sent).
    pub(super) send: Option<I>,
    pub(super) recv: O,
    pub(super) stream: &'s Stream,
    pub(super) _element: PhantomData<T>,
}

impl<'s, T, I, O> RankArgs<'s, T, I, O> {
    pub(super) fn new(send: Option<I>, recv: O, stream: &'s Stream) -> Self {
        RankArgs {
            send,
            recv,
            stream,
            _element: PhantomData,
        }
    }
}

/// The name recorded as a stream's last kernel, for error reports.
fn kernel_id(kind: CollectiveKind) -> KernelId {
    static IDS: [OnceLock<KernelId>; 4] = [const { OnceLock::new() }; 4];
    let slot = match kind {
        CollectiveKind::AllReduce(_) => 0,
        CollectiveKind::Broadcast { .. } => 1,
        CollectiveKind::ReduceScatter(_) => 2,
        CollectiveKind::AllGather => 3,
    };
    *IDS[slot].get_or_init(|| KernelId::register(kind.name()))
}

/// Checks every rank's arguments, orders the buffers' uses, and queues the
/// collective on every rank's stream (as one group when there are several).
pub(super) fn queue<T, I, O>(
    operation: &'static str,
    kind: CollectiveKind,
    ranks: &[Rank],
    mut args: Vec<RankArgs<'_, T, I, O>>,
) -> Result<()>
where
    T: CollectiveElement,
    I: DeviceInput<T>,
    O: DeviceOutput<T>,
{
    let invalid = |reason: String| Error::InvalidCollective { operation, reason };
    if args.len() != ranks.len() {
        return Err(invalid(format!(
            "{} rank(s) in this process but buffers and streams for {}",
            ranks.len(),
            args.len()
        )));
    }
    let mut calls = Vec::with_capacity(ranks.len());
    let mut states: Vec<&'static DeviceState> = Vec::with_capacity(ranks.len());
    for (rank, a) in ranks.iter().zip(&mut args) {
        let r = rank.rank;
        let recv = a.recv.raw_view();
        let send = a.send.as_ref().map_or(recv, DeviceInput::raw_view);
        for (what, device) in [
            ("stream", a.stream.device()),
            ("send buffer", send.device),
            ("receive buffer", recv.device),
        ] {
            if device != rank.device {
                return Err(invalid(format!(
                    "rank {r}'s {what} is on device {device}, its communicator on device {}",
                    rank.device
                )));
            }
        }
        let count = match kind {
            CollectiveKind::AllGather => send.len,
            _ => recv.len,
        };
        let (want_send, want_recv) = kind.lengths(count, rank.ranks);
        if send.len != want_send || recv.len != want_recv {
            let shape = match kind {
                CollectiveKind::ReduceScatter(_) => format!(
                    "the send buffer holds one block per rank: {} ranks x {count} received elements = {want_send}",
                    rank.ranks
                ),
                CollectiveKind::AllGather => format!(
                    "the receive buffer holds one block per rank: {} ranks x {count} sent elements = {want_recv}",
                    rank.ranks
                ),
                _ => "send and receive buffers have the same length".to_string(),
            };
            return Err(invalid(format!(
                "rank {r} sends {} and receives {} elements, but {shape}",
                send.len, recv.len
            )));
        }
        if let CollectiveKind::Broadcast { root } = kind {
            if root >= rank.ranks {
                return Err(invalid(format!(
                    "root {root} is not a rank of this communicator of {} ranks",
                    rank.ranks
                )));
            }
        }
        if let Some(first) = calls.first().map(|c: &Collective| c.count) {
            if first != count {
                return Err(invalid(format!(
                    "rank 0 gives {first} elements, rank {r} {count}: every rank's count must be the same"
                )));
            }
        }
        states.push(a.stream.device_state("a collective")?);
        calls.push(Collective {
            kind,
            comm: rank.handle,
            send: send.ptr,
            recv: recv.ptr,
            count,
            element: T::KIND,
            stream: a.stream.handle(),
        });
    }
    for a in &args {
        if let Some(send) = &a.send {
            send.before_device_access(a.stream)?;
        }
        a.recv.before_device_access(a.stream)?;
    }
    // SAFETY: every range is device memory of its rank's device of the
    // length the operation reads or writes (checked above), borrowed for this
    // call, and ordered after its conflicting uses on other streams by the
    // tracking; buffers free in stream order after their tracked uses, so the
    // memory outlives the collective; the receive buffers are borrowed
    // exclusively, so no other argument aliases them. The communicators are
    // borrowed mutably by the caller.
    unsafe { driver().collectives(&calls) }.map_err(error)?;
    let id = kernel_id(kind);
    for (a, state) in args.iter().zip(states) {
        a.stream.note_launch(id, state);
        if let Some(hook) = a.send.as_ref().and_then(|s| s.after_access_hook()) {
            hook.after_access(a.stream)?;
        }
        if let Some(hook) = a.recv.after_access_hook() {
            hook.after_access(a.stream)?;
        }
    }
    Ok(())
}
