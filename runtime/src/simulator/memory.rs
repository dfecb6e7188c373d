//! Simulated device memory: aligned host allocations, copies in stream order.

use super::stream;
use crate::driver::{self, CUdeviceptr, CUstream, Status};
use std::alloc::Layout;
use std::collections::BTreeMap;
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
    /// Start address to size and whether it is page-locked host memory.
    sizes: BTreeMap<usize, (usize, bool)>,
    used: usize,
}

fn allocations() -> &'static Mutex<Allocations> {
    static ALLOCATIONS: OnceLock<Mutex<Allocations>> = OnceLock::new();
    ALLOCATIONS.get_or_init(|| {
        Mutex::new(Allocations {
            sizes: BTreeMap::new(),
            used: 0,
        })
    })
}

pub(crate) fn alloc(bytes: usize) -> (Status, CUdeviceptr) {
    allocate(bytes, false)
}

fn allocate(bytes: usize, pinned: bool) -> (Status, CUdeviceptr) {
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
    table.sizes.insert(ptr as usize, (bytes, pinned));
    (driver::SUCCESS, ptr as CUdeviceptr)
}

pub(crate) fn free(ptr: CUdeviceptr) -> Status {
    // As cuMemFree: wait for the work that may still use the memory.
    stream::wait_all();
    let mut table = allocations().lock().unwrap_or_else(|e| e.into_inner());
    let Some((bytes, _)) = table.sizes.remove(&(ptr as usize)) else {
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

/// Whether `ptr` lies in page-locked host memory of the simulator.
pub(crate) fn is_pinned(ptr: *const u8) -> bool {
    let table = allocations().lock().unwrap_or_else(|e| e.into_inner());
    let address = ptr as usize;
    table
        .sizes
        .range(..=address)
        .next_back()
        .is_some_and(|(&start, &(bytes, pinned))| pinned && address < start + bytes.max(1))
}

/// Host to device. Pageable memory is read now (CUDA stages it before
/// returning); page-locked memory when the stream gets there, as the DMA does.
pub(crate) fn copy_to_device(
    dst: CUdeviceptr,
    src: *const u8,
    bytes: usize,
    handle: CUstream,
) -> Status {
    if is_pinned(src) {
        return copy(dst as *mut u8, src as CUdeviceptr, bytes, handle);
    }
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

/// Page-locked host memory on the simulator: an aligned host allocation.
pub(crate) fn host_alloc(bytes: usize) -> (Status, *mut std::ffi::c_void) {
    let (code, ptr) = allocate(bytes, true);
    (code, ptr as *mut std::ffi::c_void)
}

/// Mapped page-locked memory on the simulator: the device reads and writes
/// host memory, so the device address is the host address.
pub(crate) fn host_device_pointer(ptr: *mut std::ffi::c_void) -> (Status, CUdeviceptr) {
    let table = allocations().lock().unwrap_or_else(|e| e.into_inner());
    match table.sizes.get(&(ptr as usize)) {
        Some(&(_, true)) => (driver::SUCCESS, ptr as CUdeviceptr),
        _ => (driver::ERROR_INVALID_VALUE, 0),
    }
}

pub(crate) fn host_free(ptr: *mut std::ffi::c_void) -> Status {
    free(ptr as CUdeviceptr)
}
