//! `read_run_unaligned` on the host (the simulator's arm) against plain
//! indexing, its slices at the edges of a page between two inaccessible
//! ones: a vector load across the page's first or last byte faults. (A
//! load past a slice's end inside the 16-byte line that holds it faults
//! nowhere, no protection being finer than a page: that the reader never
//! makes one rests on its bounds tests, `vectors` in
//! `read_runs_unaligned`.)

use super::{read_run_unaligned, VectorElement};
use crate::half::{bf16, f16};

/// Three pages, the first and the last inaccessible: the middle one's
/// bytes are `0, 1, 2, ...` (mod 251).
struct Guarded {
    base: *mut u8,
    page: usize,
}

impl Guarded {
    fn new() -> Guarded {
        // SAFETY: `sysconf` has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap();
        // SAFETY: an anonymous private mapping of 3 pages, checked below.
        let base = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                3 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED, "mmap");
        let base = base.cast::<u8>();
        // SAFETY: the mapping's first and last pages.
        unsafe {
            assert_eq!(libc::mprotect(base.cast(), page, libc::PROT_NONE), 0);
            assert_eq!(
                libc::mprotect(base.add(2 * page).cast(), page, libc::PROT_NONE),
                0
            );
        }
        for i in 0..page {
            // SAFETY: the middle page, readable and writable.
            unsafe { base.add(page + i).write((i % 251) as u8) };
        }
        Guarded { base, page }
    }

    /// The `T`s of the middle page from byte `from` to byte `to`
    /// (multiples of `size_of::<T>()`).
    fn slice<T: VectorElement>(&self, from: usize, to: usize) -> &[T] {
        let size = size_of::<T>();
        assert!(
            from.is_multiple_of(size) && to.is_multiple_of(size) && from <= to && to <= self.page
        );
        // SAFETY: inside the middle page, aligned for `T` (a page is), and
        // every bit pattern is a `T`; nothing writes it while borrowed.
        unsafe {
            core::slice::from_raw_parts(
                self.base.add(self.page + from).cast::<T>(),
                (to - from) / size,
            )
        }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`.
        unsafe { libc::munmap(self.base.cast(), 3 * self.page) };
    }
}

/// Every start of slices starting at each of 16 byte offsets from the
/// page's first byte and ending at each of 16 from its last (or in the
/// page's middle), against plain indexing: `None` exactly where the run
/// leaves the slice.
fn every_start<T: VectorElement, const N: usize>(pages: &Guarded) {
    let size = size_of::<T>();
    let page = pages.page;
    for head in (0..16).step_by(size) {
        for tail in (0..16).step_by(size) {
            for to in [page - tail, 96 + tail] {
                let slice = pages.slice::<T>(head, to);
                for start in 0..slice.len() + 2 {
                    let want: Option<[T; N]> = slice
                        .get(start..start + N)
                        .map(|run| core::array::from_fn(|i| run[i]));
                    let got = read_run_unaligned::<T, N>(slice, start);
                    assert_eq!(
                        got.map(bytes),
                        want.map(bytes),
                        "{}: bytes {head}..{to}, start {start}",
                        core::any::type_name::<T>()
                    );
                }
                assert!(read_run_unaligned::<T, N>(slice, usize::MAX).is_none());
            }
        }
    }
}

/// A run's bytes: compared as bits (a half float's `==` says NaN != NaN).
fn bytes<T: VectorElement, const N: usize>(run: [T; N]) -> [u8; 16] {
    assert_eq!(size_of::<[T; N]>(), 16);
    // SAFETY: 16 bytes (asserted) of plain numbers without padding.
    unsafe { core::mem::transmute_copy(&run) }
}

#[test]
fn unaligned_runs_read_what_indexing_reads_at_the_edges_of_a_page() {
    let pages = Guarded::new();
    every_start::<u8, 16>(&pages);
    every_start::<u16, 8>(&pages);
    every_start::<bf16, 8>(&pages);
    every_start::<f16, 8>(&pages);
    every_start::<f32, 4>(&pages);
    every_start::<u64, 2>(&pages);
}
