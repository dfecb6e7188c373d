//! Shared memory: one area per OS thread that runs blocks, kept from block
//! to block and launch to launch.
//!
//! On a GPU a static shared array has the same address in every block, and
//! so it does here for the blocks one OS thread runs: a block's arrays are
//! the last block's memory, holding its leftover bits (as a GPU's do; every
//! shared element type is valid for any bits). Memory is never handed back
//! while the thread lives, only replaced by a larger area when a launch
//! needs more (the old one is kept): an address a block was given stays
//! valid for the thread's life, so a handle that host-only code kept from
//! an earlier block (a `thread_local!`) reaches live memory, not freed
//! memory.

use std::cell::RefCell;

/// A static shared array: its symbol, its memory, and the block that last
/// asked for it.
struct Array {
    symbol: &'static str,
    storage: Box<[u128]>,
    /// The block (its first thread's serial) that last asked, and the bytes
    /// it was given then.
    asked_by: u64,
    held: usize,
}

/// One OS thread's shared memory.
pub(super) struct SharedMemory {
    arrays: Vec<Array>,
    dynamic: Box<[u128]>,
    /// Memory replaced by larger areas, kept (see the module documentation).
    retired: Vec<Box<[u128]>>,
}

/// Where an address of shared memory lies, for the race detector.
pub(super) struct SharedPlace {
    pub(super) name: &'static str,
    pub(super) start: usize,
    pub(super) bytes: usize,
}

/// The name reports give the dynamic shared memory.
const DYNAMIC: &str = "dynamic shared memory";

thread_local! {
    static SHARED: RefCell<SharedMemory> = RefCell::new(SharedMemory {
        arrays: Vec::new(),
        dynamic: Box::default(),
        retired: Vec::new(),
    });
}

/// Runs `f` with this OS thread's shared memory.
pub(super) fn with_shared_memory<R>(f: impl FnOnce(&RefCell<SharedMemory>) -> R) -> R {
    SHARED.with(f)
}

fn zeroed(bytes: usize) -> Box<[u128]> {
    vec![0u128; bytes.div_ceil(16)].into_boxed_slice()
}

impl SharedMemory {
    /// The static array `symbol` of at least `bytes` bytes for the block
    /// whose first thread has serial `block`: the same memory as for the
    /// blocks before, unless it is too small. One symbol is one array: asked
    /// for again in the same block with more bytes than it was given (two
    /// arrays under one name, which the device's linker would refuse), it is
    /// an error, not the smaller memory.
    pub(super) fn static_array(
        &mut self,
        symbol: &'static str,
        bytes: usize,
        block: u64,
    ) -> Result<*mut u8, String> {
        let found = self
            .arrays
            .iter()
            .position(|a| std::ptr::eq(a.symbol, symbol))
            .or_else(|| self.arrays.iter().position(|a| a.symbol == symbol));
        let array = match found {
            Some(i) => &mut self.arrays[i],
            None => {
                self.arrays.push(Array {
                    symbol,
                    storage: zeroed(bytes),
                    asked_by: block,
                    held: bytes.div_ceil(16) * 16,
                });
                return Ok(self
                    .arrays
                    .last_mut()
                    .expect("pushed")
                    .storage
                    .as_mut_ptr()
                    .cast());
            }
        };
        if array.asked_by == block {
            if bytes > array.held {
                return Err(format!(
                    "the shared array `{symbol}` was made with {} bytes and is now asked for {bytes}: two shared arrays have the same symbol",
                    array.held
                ));
            }
        } else {
            array.asked_by = block;
            array.held = bytes.div_ceil(16) * 16;
            if array.storage.len() * 16 < bytes {
                let old = std::mem::replace(&mut array.storage, zeroed(bytes));
                self.retired.push(old);
            }
        }
        Ok(array.storage.as_mut_ptr().cast())
    }

    /// The dynamic shared memory, at least `bytes` of it, 16-aligned.
    pub(super) fn dynamic(&mut self, bytes: usize) -> *mut u8 {
        if self.dynamic.len() * 16 < bytes {
            let old = std::mem::replace(&mut self.dynamic, zeroed(bytes.max(48 * 1024)));
            if !old.is_empty() {
                self.retired.push(old);
            }
        }
        self.dynamic.as_mut_ptr().cast()
    }

    /// The array or area that holds `address`, if any.
    pub(super) fn place_of(&self, address: usize) -> Option<SharedPlace> {
        let inside = |storage: &[u128]| {
            let start = storage.as_ptr() as usize;
            (start..start + storage.len() * 16)
                .contains(&address)
                .then_some(start)
        };
        self.arrays
            .iter()
            .find_map(|a| {
                inside(&a.storage).map(|start| SharedPlace {
                    name: a.symbol,
                    start,
                    bytes: a.held,
                })
            })
            .or_else(|| {
                inside(&self.dynamic).map(|start| SharedPlace {
                    name: DYNAMIC,
                    start,
                    bytes: self.dynamic.len() * 16,
                })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> SharedMemory {
        SharedMemory {
            arrays: Vec::new(),
            dynamic: Box::default(),
            retired: Vec::new(),
        }
    }

    #[test]
    fn a_symbol_keeps_its_address_from_block_to_block() {
        let mut m = memory();
        let a = m.static_array("a", 100, 1).unwrap();
        let b = m.static_array("b", 8, 1).unwrap();
        assert_ne!(a, b);
        assert_eq!(m.static_array("a", 100, 2).unwrap(), a);
        assert_eq!(m.static_array("a", 64, 3).unwrap(), a);
        // Larger in a later block: new memory, the old kept.
        let bigger = m.static_array("a", 1000, 4).unwrap();
        assert_ne!(bigger, a);
        assert_eq!(m.retired.len(), 1);
        assert_eq!(m.place_of(bigger as usize + 999).unwrap().name, "a");
        assert!(
            m.place_of(a as usize).is_none(),
            "retired memory is no array"
        );
    }

    #[test]
    fn one_symbol_asked_for_more_in_one_block_is_an_error() {
        let mut m = memory();
        m.static_array("a", 16, 1).unwrap();
        m.static_array("a", 8, 1).unwrap();
        let e = m.static_array("a", 32, 1).unwrap_err();
        assert!(
            e.contains("made with 16 bytes and is now asked for 32"),
            "{e}"
        );
    }

    #[test]
    fn dynamic_memory_grows_and_keeps_the_old() {
        let mut m = memory();
        let small = m.dynamic(100);
        assert_eq!(m.dynamic(48 * 1024), small);
        let large = m.dynamic(100 * 1024);
        assert_ne!(large, small);
        assert_eq!(m.retired.len(), 1);
        assert_eq!(m.place_of(large as usize).unwrap().name, DYNAMIC);
    }
}
