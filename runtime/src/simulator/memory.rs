//! Simulated device memory: aligned host allocations, copies in stream order.

use super::stream;
use crate::driver::{self, CUdeviceptr, CUstream, Status};
use std::alloc::Layout;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Allocations are aligned as `cuMemAlloc`'s are.
const ALIGN: usize = 256;

/// The simulated device's memory: a quarter of the host's, at least 1 GiB.
fn capacity() -> usize {
    static CAPACITY: OnceLock<usize> = OnceLock::new();
    *CAPACITY.get_or_init(|| {
        let host = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find_map(|l| l.strip_prefix("MemTotal:").map(str::to_owned))
            })
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
            .map(|kib| kib * 1024)
            .unwrap_or(8 << 30);
        (host / 4).max(1 << 30)
    })
}

struct Allocations {
    sizes: HashMap<CUdeviceptr, usize>,
    used: usize,
}

fn allocations() -> &'static Mutex<Allocations> {
    static ALLOCATIONS: OnceLock<Mutex<Allocations>> = OnceLock::new();
    ALLOCATIONS.get_or_init(|| {
        Mutex::new(Allocations {
            sizes: HashMap::new(),
            used: 0,
        })
    })
}

pub(crate) fn alloc(bytes: usize) -> (Status, CUdeviceptr) {
    let mut table = allocations().lock().unwrap_or_else(|e| e.into_inner());
    if bytes > capacity().saturating_sub(table.used) {
        return (driver::ERROR_OUT_OF_MEMORY, 0);
    }
    let Ok(layout) = Layout::from_size_align(bytes.max(1), ALIGN) else {
        return (driver::ERROR_OUT_OF_MEMORY, 0);
    };
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc(layout) };
    if ptr.is_null() {
        return (driver::ERROR_OUT_OF_MEMORY, 0);
    }
    table.used += bytes;
    table.sizes.insert(ptr as CUdeviceptr, bytes);
    (driver::SUCCESS, ptr as CUdeviceptr)
}

pub(crate) fn free(ptr: CUdeviceptr) -> Status {
    // As cuMemFree: wait for the work that may still use the memory.
    stream::wait_all();
    let mut table = allocations().lock().unwrap_or_else(|e| e.into_inner());
    let Some(bytes) = table.sizes.remove(&ptr) else {
        return driver::ERROR_INVALID_VALUE;
    };
    table.used -= bytes;
    let layout = Layout::from_size_align(bytes.max(1), ALIGN).expect("valid when allocated");
    // SAFETY: `ptr` was allocated by `alloc` with this layout and is freed once
    // (removed from the table above).
    unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
    driver::SUCCESS
}

pub(crate) fn info() -> (usize, usize) {
    let used = allocations().lock().unwrap_or_else(|e| e.into_inner()).used;
    (capacity() - used, capacity())
}

/// A device or host address carried into a queued operation.
#[derive(Clone, Copy)]
struct Address(usize);

pub(crate) fn memset(dst: CUdeviceptr, value: u8, bytes: usize, handle: CUstream) -> Status {
    let dst = Address(dst as usize);
    stream::enqueue(
        handle,
        Box::new(move || {
            // SAFETY: the caller (the runtime) guarantees `dst` is a live
            // allocation of `bytes` until the stream reaches this operation.
            unsafe { std::ptr::write_bytes(dst.0 as *mut u8, value, bytes) };
            Ok(())
        }),
    )
}

/// Host to device: the source is read now (as CUDA stages pageable memory),
/// the destination written in stream order.
pub(crate) fn copy_to_device(
    dst: CUdeviceptr,
    src: *const u8,
    bytes: usize,
    handle: CUstream,
) -> Status {
    // SAFETY: the caller guarantees `src` is readable for `bytes`.
    let staged = unsafe { std::slice::from_raw_parts(src, bytes) }.to_vec();
    let dst = Address(dst as usize);
    stream::enqueue(
        handle,
        Box::new(move || {
            // SAFETY: `dst` is a live allocation of `bytes` until the stream
            // reaches this operation (the caller's contract).
            unsafe { std::ptr::copy_nonoverlapping(staged.as_ptr(), dst.0 as *mut u8, bytes) };
            Ok(())
        }),
    )
}

/// Device to host, or device to device: in stream order.
pub(crate) fn copy(dst: *mut u8, src: CUdeviceptr, bytes: usize, handle: CUstream) -> Status {
    let (dst, src) = (Address(dst as usize), Address(src as usize));
    stream::enqueue(
        handle,
        Box::new(move || {
            // SAFETY: both ranges stay valid and untouched by the host until
            // the stream reaches this operation (the caller's contract).
            unsafe { std::ptr::copy(src.0 as *const u8, dst.0 as *mut u8, bytes) };
            Ok(())
        }),
    )
}
