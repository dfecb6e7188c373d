//! What a driver receives for a collective operation (NCCL's all-reduce,
//! broadcast, reduce-scatter and all-gather): the element types, reduction
//! operators, and one rank's call.

/// The bytes of NCCL's `ncclUniqueId`.
pub(crate) const UNIQUE_ID_BYTES: usize = 128;

/// What the simulator's unique ids start with (NCCL's start with a socket
/// address family, never these bytes), so that each backend refuses the
/// other's ids with a clear error.
pub(crate) const SIMULATED_ID_MAGIC: &[u8; 8] = b"gpu-sim\0";

/// A communicator, as a driver names it (NCCL's `ncclComm_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CommHandle(pub(crate) usize);

/// The element types collectives move and reduce (NCCL's `ncclDataType_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementKind {
    /// `i8`
    I8,
    /// `u8`
    U8,
    /// `i32`
    I32,
    /// `u32`
    U32,
    /// `i64`
    I64,
    /// `u64`
    U64,
    /// `f32`
    F32,
    /// `f64`
    F64,
}

impl ElementKind {
    /// NCCL's `ncclDataType_t` value.
    pub(crate) fn nccl(self) -> i32 {
        match self {
            ElementKind::I8 => 0,
            ElementKind::U8 => 1,
            ElementKind::I32 => 2,
            ElementKind::U32 => 3,
            ElementKind::I64 => 4,
            ElementKind::U64 => 5,
            ElementKind::F32 => 7,
            ElementKind::F64 => 8,
        }
    }

    /// The size of one element in bytes.
    pub(crate) fn bytes(self) -> usize {
        match self {
            ElementKind::I8 | ElementKind::U8 => 1,
            ElementKind::I32 | ElementKind::U32 | ElementKind::F32 => 4,
            ElementKind::I64 | ElementKind::U64 | ElementKind::F64 => 8,
        }
    }
}

/// How a reduction combines the ranks' elements (NCCL's `ncclRedOp_t`).
/// Integers wrap on overflow, as on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum.
    Sum,
    /// The product.
    Prod,
    /// The largest element.
    Max,
    /// The smallest element.
    Min,
}

impl ReduceOp {
    /// NCCL's `ncclRedOp_t` value.
    pub(crate) fn nccl(self) -> i32 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Prod => 1,
            ReduceOp::Max => 2,
            ReduceOp::Min => 3,
        }
    }
}

/// Which collective, with its operator or root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CollectiveKind {
    /// Every rank receives the reduction of every rank's `count` elements.
    AllReduce(ReduceOp),
    /// Every rank receives the root's `count` elements (read on the root only).
    Broadcast { root: usize },
    /// Every rank sends `ranks * count` elements and receives its `count`
    /// element block of their reduction.
    ReduceScatter(ReduceOp),
    /// Every rank sends `count` elements and receives all ranks' blocks, in
    /// rank order (`ranks * count`).
    AllGather,
}

impl CollectiveKind {
    /// NCCL's name of the operation.
    pub(crate) fn name(self) -> &'static str {
        match self {
            CollectiveKind::AllReduce(_) => "ncclAllReduce",
            CollectiveKind::Broadcast { .. } => "ncclBroadcast",
            CollectiveKind::ReduceScatter(_) => "ncclReduceScatter",
            CollectiveKind::AllGather => "ncclAllGather",
        }
    }

    /// Elements (sent, received) by one rank of `ranks` for NCCL's `count`.
    pub(crate) fn lengths(self, count: usize, ranks: usize) -> (usize, usize) {
        match self {
            CollectiveKind::AllReduce(_) | CollectiveKind::Broadcast { .. } => (count, count),
            // Saturating: an overflowing product matches no buffer's length.
            CollectiveKind::ReduceScatter(_) => (count.saturating_mul(ranks), count),
            CollectiveKind::AllGather => (count, count.saturating_mul(ranks)),
        }
    }
}
