// The attack of issue 9: thread 0 stores its ThreadIndex in a static behind
// a spin lock, every thread takes it out and writes element 0. A static must
// be Sync, the lock is Sync only for Send contents, and ThreadIndex is not Send.
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

pub struct SpinLock<T> {
    locked: AtomicBool,
    value: UnsafeCell<T>,
}
unsafe impl<T: Send> Sync for SpinLock<T> {}
impl<T> SpinLock<T> {
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        while self.locked.swap(true, Ordering::Acquire) {}
        let r = f(unsafe { &mut *self.value.get() });
        self.locked.store(false, Ordering::Release);
        r
    }
}

static STOLEN: SpinLock<Option<ThreadIndex>> = SpinLock {
    locked: AtomicBool::new(false),
    value: UnsafeCell::new(None),
};

#[kernel]
pub fn steal(mut out: DisjointSlice<u32>) {
    let mine = thread_index();
    let index = STOLEN.with(|s| *s.get_or_insert(mine));
    out.set(index, 1);
}

fn main() {}
