//! The shadow of one 4-byte word: the accesses to it that a later access
//! could race with, and the rules that decide.

use gpu_device::__private::simulation::AccessKind;

/// How many unsuperseded accesses of one word are kept.
pub(crate) const KEPT: usize = 4;

/// Who made an access, and when, in the terms of the race rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    /// The block, its linear index in the launch.
    pub(crate) block: u64,
    /// The thread, its linear index in the block (below 1024).
    pub(crate) thread: u16,
    /// How many barriers the block had passed.
    pub(crate) interval: u32,
    /// How many grid syncs the launch had passed (a cooperative launch's
    /// blocks pass each together).
    pub(crate) grid: u32,
    /// The thread's own warp clock (see [`Shadow::access`]).
    pub(crate) clock: u32,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Record {
    stamp: Stamp,
    kind: AccessKind,
    /// The bytes of the word it touched.
    mask: u8,
}

/// The accesses to one word that no later access supersedes (the last
/// [`KEPT`]).
pub(crate) enum Shadow {
    Empty,
    One(Record),
    Many(Vec<Record>),
}

/// Whether two accesses of these kinds conflict when unordered: at least one
/// writes, and they are not both atomic.
fn conflicts(a: AccessKind, b: AccessKind) -> bool {
    !matches!(
        (a, b),
        (AccessKind::Read, AccessKind::Read) | (AccessKind::Atomic, AccessKind::Atomic)
    )
}

/// Whether `earlier` is ordered before `now`. `clocks(lane)` is what the
/// thread of `now` knows of lane `lane`'s warp clock: the clock of that lane
/// when it last took part in a warp operation with `now`'s thread (directly
/// or through others). A lane's clock moves on after each warp operation, so
/// an access made at clock `c` is ordered before every access of a lane that
/// has since seen `c`.
fn ordered(earlier: &Stamp, now: &Stamp, clocks: &dyn Fn(u16) -> u32) -> bool {
    if earlier.grid < now.grid {
        // A grid sync lies between them: it orders every block's accesses.
        return true;
    }
    if earlier.block != now.block {
        return false;
    }
    if earlier.thread == now.thread || earlier.interval < now.interval {
        return true;
    }
    earlier.thread / 32 == now.thread / 32 && clocks(earlier.thread % 32) >= earlier.clock
}

impl Shadow {
    pub(crate) fn new() -> Shadow {
        Shadow::Empty
    }

    /// Checks an access of `kind` to the bytes `mask` of the word, made by
    /// `stamp`'s thread: returns an earlier access it races with, or records
    /// it. A recorded access supersedes (drops) the earlier ones that are
    /// ordered before it, touch no byte it does not, and conflict with
    /// nothing it does not conflict with: a later access that races with one
    /// of those races with it too.
    pub(crate) fn access(
        &mut self,
        kind: AccessKind,
        mask: u8,
        stamp: Stamp,
        clocks: &dyn Fn(u16) -> u32,
    ) -> Option<(Stamp, AccessKind)> {
        let new = Record { stamp, kind, mask };
        let records: &[Record] = match self {
            Shadow::Empty => &[],
            Shadow::One(r) => std::slice::from_ref(r),
            Shadow::Many(v) => v,
        };
        for r in records {
            if r.mask & mask != 0 && conflicts(r.kind, kind) && !ordered(&r.stamp, &stamp, clocks) {
                return Some((r.stamp, r.kind));
            }
        }
        let superseded = |r: &Record| {
            ordered(&r.stamp, &stamp, clocks)
                && (kind == AccessKind::Write || kind == r.kind)
                && r.mask & !mask == 0
        };
        match self {
            Shadow::Empty => *self = Shadow::One(new),
            Shadow::One(r) if superseded(r) => *r = new,
            Shadow::One(r) => *self = Shadow::Many(vec![*r, new]),
            Shadow::Many(v) => {
                v.retain(|r| !superseded(r));
                if v.is_empty() {
                    *self = Shadow::One(new);
                } else {
                    if v.len() == KEPT {
                        v.remove(0);
                    }
                    v.push(new);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccessKind::{Atomic, Read, Write};

    fn at(block: u64, thread: u16, interval: u32) -> Stamp {
        Stamp {
            block,
            thread,
            interval,
            grid: 0,
            clock: 1,
        }
    }

    /// A thread that has seen no other lane's clock.
    fn alone(_: u16) -> u32 {
        0
    }

    #[test]
    fn unordered_conflicts_race_and_the_rest_do_not() {
        let mut s = Shadow::new();
        assert_eq!(s.access(Read, 0b1111, at(0, 0, 0), &alone), None);
        assert_eq!(
            s.access(Read, 0b1111, at(0, 1, 0), &alone),
            None,
            "read/read"
        );
        assert_eq!(
            s.access(Write, 0b0001, at(0, 2, 0), &alone),
            Some((at(0, 0, 0), Read))
        );
        // After a barrier the block's accesses are ordered.
        assert_eq!(s.access(Write, 0b1111, at(0, 2, 1), &alone), None);
        assert_eq!(
            s.access(Write, 0b1111, at(0, 3, 1), &alone),
            Some((at(0, 2, 1), Write))
        );
        // Another block is never ordered, even after barriers.
        let mut s = Shadow::new();
        assert_eq!(s.access(Write, 0b1111, at(0, 0, 0), &alone), None);
        assert_eq!(
            s.access(Read, 0b1111, at(1, 0, 5), &alone),
            Some((at(0, 0, 0), Write))
        );
    }

    /// A grid sync (a cooperative launch's) orders every block's accesses
    /// before it with every access after it; within one grid interval,
    /// blocks stay unordered.
    #[test]
    fn a_grid_sync_orders_the_blocks() {
        let after_grid_sync = |block, thread, interval| Stamp {
            grid: 1,
            ..at(block, thread, interval)
        };
        let mut s = Shadow::new();
        assert_eq!(s.access(Write, 0b1111, at(0, 0, 0), &alone), None);
        assert_eq!(
            s.access(Read, 0b1111, after_grid_sync(1, 5, 2), &alone),
            None
        );
        assert_eq!(
            s.access(Write, 0b1111, after_grid_sync(2, 7, 2), &alone),
            Some((after_grid_sync(1, 5, 2), Read))
        );
    }

    #[test]
    fn bytes_apart_and_atomics_together_do_not_race() {
        let mut s = Shadow::new();
        assert_eq!(s.access(Write, 0b0001, at(0, 0, 0), &alone), None);
        assert_eq!(s.access(Write, 0b0010, at(0, 1, 0), &alone), None);
        assert_eq!(s.access(Atomic, 0b1100, at(0, 2, 0), &alone), None);
        assert_eq!(s.access(Atomic, 0b1100, at(0, 3, 0), &alone), None);
        assert_eq!(
            s.access(Read, 0b0100, at(0, 4, 0), &alone),
            Some((at(0, 2, 0), Atomic))
        );
    }

    #[test]
    fn a_warp_operation_orders_its_lanes() {
        let mut s = Shadow::new();
        assert_eq!(s.access(Write, 0b1111, at(0, 1, 0), &alone), None);
        // Lane 2 has seen lane 1 at clock 1 (a shuffle between them).
        let seen = |lane: u16| if lane == 1 { 1 } else { 0 };
        assert_eq!(s.access(Read, 0b1111, at(0, 2, 0), &seen), None);
        // Lane 40 is in another warp: the shuffle did not order it.
        assert_eq!(
            s.access(Write, 0b1111, at(0, 40, 0), &seen),
            Some((at(0, 1, 0), Write))
        );
    }

    #[test]
    fn an_ordered_write_supersedes_and_the_kept_records_are_bounded() {
        let mut s = Shadow::new();
        for t in 0..10 {
            assert_eq!(s.access(Read, 0b1111, at(0, t, 0), &alone), None);
        }
        match &s {
            Shadow::Many(v) => assert_eq!(v.len(), KEPT),
            _ => panic!("several readers kept"),
        }
        assert_eq!(s.access(Write, 0b1111, at(0, 0, 1), &alone), None);
        assert!(
            matches!(s, Shadow::One(_)),
            "the write supersedes the reads"
        );
        // A read does not supersede a write: a later read must not race it.
        assert_eq!(s.access(Read, 0b1111, at(0, 0, 1), &alone), None);
        assert_eq!(
            s.access(Write, 0b1111, at(0, 5, 1), &alone),
            Some((at(0, 0, 1), Write))
        );
    }
}
