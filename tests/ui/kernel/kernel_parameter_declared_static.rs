// Attack: a kernel declares its atomic counters `&'static`, stores them in a
// static behind a (sound) spin lock, and a later launch, after the host has
// freed the buffer, updates memory that may belong to another buffer by now.
// The slices a kernel receives live only as long as its entry point's call,
// so a kernel that asks for `'static` ones does not compile.
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

static STASH: SpinLock<Option<&'static [DeviceAtomic<u32>]>> = SpinLock {
    locked: AtomicBool::new(false),
    value: UnsafeCell::new(None),
};

#[kernel]
pub fn stash(counters: &'static [DeviceAtomic<u32>]) {
    STASH.with(|s| *s = Some(counters));
}

#[kernel]
pub fn keep_input(input: &'static [f32]) {
    let _ = input;
}

#[kernel]
pub fn use_after_free() {
    if let Some(counters) = STASH.with(|s| *s) {
        counters[0].fetch_add(1);
    }
}

fn main() {}
