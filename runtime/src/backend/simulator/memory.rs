//! Simulated device memory: aligned host allocations, counted against each
//! device's capacity; copies, fills and frees in stream order. Stream-ordered
//! allocations go through each device's pool ([`super::pool`]).

use super::super::{status, DevicePtr, DriverError, GraphNodeKind, StreamHandle, MAX_DEVICES};
use super::errors::invalid_value;
use super::pool;
use super::stream;
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex, OnceLock};

/// Allocations are aligned as `cuMemAlloc`'s are.
const ALIGN: usize = 256;

/// The host's memory, for the simulated devices' capacity.
fn host_memory() -> usize {
    static HOST: OnceLock<usize> = OnceLock::new();
    *HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| {
                m.lines()
                    .find_map(|l| l.strip_prefix("MemTotal:").map(str::to_owned))
            })
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
            .map(|kib| kib * 1024)
            .unwrap_or(8 << 30)
    })
}

/// Each simulated device's memory: a quarter of the host's, shared out among
/// the devices, at least 256 MiB.
fn capacity(devices: usize) -> usize {
    (host_memory() / 4 / devices.max(1)).max(256 << 20)
}

/// Where an allocation lives.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Stream-ordered device memory (the pool's blocks, graphs', globals').
    Device(usize),
    PinnedHost,
    /// Managed memory: host memory simulated kernels read and write,
    /// counted against its device's capacity.
    Managed(usize),
    /// A pitched allocation of a device (`cuMemAllocPitch`).
    Pitched(usize),
}

impl Place {
    /// The device whose capacity the allocation counts against.
    fn device(self) -> Option<usize> {
        match self {
            Place::Device(d) | Place::Managed(d) | Place::Pitched(d) => Some(d),
            Place::PinnedHost => None,
        }
    }
}

struct Allocations {
    /// Start address to size and place.
    blocks: BTreeMap<usize, (usize, Place)>,
    /// For a pool block, the bytes its current allocation asked for (the
    /// block is rounded up): what reports name.
    requested: BTreeMap<usize, usize>,
    /// Bytes in use per device.
    used: Vec<usize>,
}

fn allocations() -> std::sync::MutexGuard<'static, Allocations> {
    static ALLOCATIONS: OnceLock<Mutex<Allocations>> = OnceLock::new();
    ALLOCATIONS
        .get_or_init(|| {
            Mutex::new(Allocations {
                blocks: BTreeMap::new(),
                requested: BTreeMap::new(),
                used: vec![0; MAX_DEVICES],
            })
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn layout(bytes: usize) -> Option<Layout> {
    Layout::from_size_align(bytes.max(1), ALIGN).ok()
}

fn out_of_memory(call: &'static str, bytes: usize) -> DriverError {
    DriverError {
        call,
        code: status::OUT_OF_MEMORY,
        name: "CUDA_ERROR_OUT_OF_MEMORY".into(),
        description: format!("the simulated device cannot hold {bytes} more bytes"),
    }
}

fn allocate(
    call: &'static str,
    bytes: usize,
    place: Place,
    devices: usize,
) -> Result<usize, DriverError> {
    let mut table = allocations();
    if let Some(device) = place.device() {
        if bytes > capacity(devices).saturating_sub(table.used[device]) {
            return Err(out_of_memory(call, bytes));
        }
    }
    let layout = layout(bytes).ok_or_else(|| out_of_memory(call, bytes))?;
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc(layout) };
    if ptr.is_null() {
        return Err(out_of_memory(call, bytes));
    }
    if let Some(device) = place.device() {
        table.used[device] += bytes;
    }
    table.blocks.insert(ptr as usize, (bytes, place));
    Ok(ptr as usize)
}

/// The allocation holding `address`: its start and size in bytes (for the
/// race detector's reports).
pub(crate) fn describe_address(address: usize) -> Option<(usize, usize)> {
    let table = allocations();
    let (&start, &(bytes, _)) = table.blocks.range(..=address).next_back()?;
    let asked = table.requested.get(&start).copied().unwrap_or(bytes);
    (address < start + bytes.max(1)).then_some((start, asked))
}

/// The simulated device allocation holding `address`: its device, start and
/// size in bytes; `None` for pinned host memory and unknown addresses.
pub(crate) fn device_range(address: usize) -> Option<super::super::MemoryRange> {
    let table = allocations();
    let (&start, &(bytes, place)) = table.blocks.range(..=address).next_back()?;
    let Place::Device(device) = place else {
        return None;
    };
    let asked = table.requested.get(&start).copied().unwrap_or(bytes);
    (address < start + asked.max(1)).then_some(super::super::MemoryRange {
        device,
        extent: Some((start as DevicePtr, asked)),
    })
}

/// Returns an allocation to the host allocator.
fn release(call: &'static str, ptr: usize) -> Result<(), DriverError> {
    let mut table = allocations();
    table.requested.remove(&ptr);
    let Some((bytes, place)) = table.blocks.remove(&ptr) else {
        return Err(invalid_value(
            call,
            format!("{ptr:#x} is not an allocation of the simulator"),
        ));
    };
    if let Some(device) = place.device() {
        table.used[device] -= bytes;
    }
    let layout = layout(bytes).expect("valid when allocated");
    // SAFETY: `ptr` was allocated by `allocate` with this layout and is freed
    // once (removed from the table above).
    unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
    Ok(())
}

/// Device memory outside the pool (a graph's, a module's globals).
pub(crate) fn alloc(bytes: usize, device: usize, devices: usize) -> Result<DevicePtr, DriverError> {
    allocate("cuMemAllocAsync", bytes, Place::Device(device), devices).map(|p| p as DevicePtr)
}

/// Device memory from `device`'s pool for use on `on` in stream order: a
/// cached block the stream may reuse, else a new one; when the device is
/// full, the pool's completed cached blocks are given back first.
pub(crate) fn pool_alloc(
    bytes: usize,
    device: usize,
    devices: usize,
    on: StreamHandle,
) -> Result<DevicePtr, DriverError> {
    let asked = bytes;
    let bytes = pool::rounded(bytes);
    if let Some(ptr) = pool::reuse(device, bytes, stream::identity(on)) {
        allocations().requested.insert(ptr, asked);
        return Ok(ptr as DevicePtr);
    }
    let ptr = match allocate("cuMemAllocAsync", bytes, Place::Device(device), devices) {
        Ok(ptr) => ptr,
        Err(e) if e.is_out_of_memory() => {
            give_back(pool::trim(device, 0));
            allocate("cuMemAllocAsync", bytes, Place::Device(device), devices)?
        }
        Err(e) => return Err(e),
    };
    pool::grew(device, bytes);
    allocations().requested.insert(ptr, asked);
    Ok(ptr as DevicePtr)
}

/// Returns blocks the pool let go of to the host allocator.
fn give_back(blocks: Vec<usize>) {
    for ptr in blocks {
        let _ = release("cuMemPoolTrimTo", ptr);
    }
}

/// Gives `device`'s completed cached blocks back until the pool reserves at
/// most `keep` bytes (`cuMemPoolTrimTo`).
pub(crate) fn trim_pool(device: usize, keep: usize) {
    give_back(pool::trim(device, keep));
}

/// At a synchronisation of `device`'s work: the pool keeps no more cached
/// memory than its release threshold.
pub(crate) fn after_synchronize(device: usize) {
    give_back(pool::over_threshold(device));
}

/// Gives an allocation back now (the memory of a graph, once the graph and
/// its instances are gone).
pub(crate) fn free_now(ptr: DevicePtr) {
    let _ = release("cuGraphDestroy", ptr as usize);
}

/// Frees `ptr` when the stream gets there, as `cuMemFreeAsync` does. On a
/// capturing stream, memory the capture allocated gets a free node (the
/// graph releases it when it is gone); other memory cannot be freed there.
///
/// # Safety
/// `ptr` came from `alloc`, is freed once, and nothing queued after this uses it.
pub(crate) unsafe fn free_async(ptr: DevicePtr, on: StreamHandle) -> Result<(), DriverError> {
    if let Some(membership) = stream::membership(on) {
        if !membership.capture.memory.contains(ptr) {
            return Err(invalid_value(
                "cuMemFreeAsync",
                format!(
                    "{ptr:#x} was not allocated in capture {}, which cannot free it",
                    membership.capture.id
                ),
            ));
        }
        stream::capture_marker(on, GraphNodeKind::MemFree);
        return Ok(());
    }
    let not_ours = || {
        invalid_value(
            "cuMemFreeAsync",
            format!("{ptr:#x} is not an allocation of the simulator's pools"),
        )
    };
    let device = match allocations().blocks.get(&(ptr as usize)) {
        Some(&(_, Place::Device(device))) => device,
        _ => return Err(not_ours()),
    };
    let (ptr, bytes) = (ptr as usize, pool::rounded(allocation_bytes(ptr as usize)));
    // Cached now: an allocation queued on this stream after the free may
    // reuse it; others wait for the free to complete.
    if !pool::freed(device, ptr, bytes, stream::identity(on), false) {
        return Err(invalid_value(
            "cuMemFreeAsync",
            format!("{ptr:#x} was freed already"),
        ));
    }
    let queued = stream::enqueue(
        on,
        Box::new(move || {
            pool::completed(device, ptr);
            Ok(())
        }),
    );
    if queued.is_err() {
        pool::unfree(device, ptr);
    }
    queued
}

/// The size of the allocation starting at `ptr` (0 if none).
fn allocation_bytes(ptr: usize) -> usize {
    allocations()
        .blocks
        .get(&ptr)
        .map_or(0, |&(bytes, _)| bytes)
}

pub(crate) fn info(device: usize, devices: usize) -> (usize, usize) {
    let used = allocations().used[device];
    (capacity(devices) - used, capacity(devices))
}

/// A device or host address carried into a queued operation.
#[derive(Clone, Copy)]
struct Address(usize);

/// # Safety
/// `dst` is a live allocation of `bytes` bytes until the stream reaches the
/// operation.
pub(crate) unsafe fn memset(
    dst: DevicePtr,
    value: u8,
    bytes: usize,
    on: StreamHandle,
) -> Result<(), DriverError> {
    let dst = Address(dst as usize);
    stream::submit(
        on,
        GraphNodeKind::Memset,
        "",
        Arc::new(move || {
            // SAFETY: the caller guarantees `dst` is a live allocation of
            // `bytes` bytes until the stream gets here (at each run of a
            // captured graph: it outlives the graph).
            unsafe { std::ptr::write_bytes(dst.0 as *mut u8, value, bytes) };
            Ok(())
        }),
    )
}

/// Managed memory of `device` (`cuMemAllocManaged`).
pub(crate) fn managed_alloc(
    bytes: usize,
    device: usize,
    devices: usize,
) -> Result<DevicePtr, DriverError> {
    allocate("cuMemAllocManaged", bytes, Place::Managed(device), devices).map(|p| p as DevicePtr)
}

/// The pitch `cuMemAllocPitch` gives rows of `width_bytes`: a multiple of
/// 512 bytes, as on current GPUs.
pub(crate) fn pitch_of(width_bytes: usize) -> Option<usize> {
    width_bytes.checked_next_multiple_of(512)
}

/// `rows` rows of `width_bytes` of `device`, each at a multiple of the pitch.
pub(crate) fn pitch_alloc(
    width_bytes: usize,
    rows: usize,
    device: usize,
    devices: usize,
) -> Result<(DevicePtr, usize), DriverError> {
    let too_big = || out_of_memory("cuMemAllocPitch", usize::MAX);
    let pitch = pitch_of(width_bytes).ok_or_else(too_big)?;
    let bytes = pitch.checked_mul(rows).ok_or_else(too_big)?;
    let ptr = allocate("cuMemAllocPitch", bytes, Place::Pitched(device), devices)?;
    Ok((ptr as DevicePtr, pitch))
}

/// Frees managed or pitched memory now (`cuMemFree`); any other address is
/// refused, as the driver refuses what it did not allocate so.
pub(crate) fn free_allocation(ptr: DevicePtr) -> Result<(), DriverError> {
    match allocations().blocks.get(&(ptr as usize)) {
        Some((_, Place::Managed(_) | Place::Pitched(_))) => {}
        _ => {
            return Err(invalid_value(
                "cuMemFree",
                format!("{ptr:#x} is not managed or pitched memory of the simulator"),
            ))
        }
    }
    release("cuMemFree", ptr as usize)
}

/// The device of the managed allocation holding all of `ptr..ptr + bytes`.
pub(crate) fn managed_range(ptr: DevicePtr, bytes: usize) -> Option<usize> {
    let table = allocations();
    let address = ptr as usize;
    let (&start, &(size, place)) = table.blocks.range(..=address).next_back()?;
    match place {
        Place::Managed(device) if address.checked_add(bytes)? <= start + size => Some(device),
        _ => None,
    }
}

/// Whether `ptr` lies in page-locked host memory of the simulator.
pub(crate) fn is_pinned(ptr: *const u8) -> bool {
    let table = allocations();
    let address = ptr as usize;
    table
        .blocks
        .range(..=address)
        .next_back()
        .is_some_and(|(&start, &(bytes, place))| {
            place == Place::PinnedHost && address < start + bytes.max(1)
        })
}

/// Host to device. Pageable memory is read now (CUDA stages it before
/// returning); page-locked memory when the stream gets there, as the DMA does.
/// The bytes are copied as bytes that may be uninitialised (padding of the
/// element type), never read as `u8` values.
///
/// # Safety
/// `src` is readable for `bytes` (until the copy ran, for page-locked memory);
/// `dst` is a live allocation of `bytes` until the stream gets there.
pub(crate) unsafe fn copy_to_device(
    dst: DevicePtr,
    src: *const u8,
    bytes: usize,
    on: StreamHandle,
) -> Result<(), DriverError> {
    if is_pinned(src) {
        // SAFETY: forwarded to the caller.
        return unsafe { copy(dst, src as DevicePtr, bytes, on) };
    }
    let mut staged: Vec<MaybeUninit<u8>> = Vec::with_capacity(bytes);
    // SAFETY: `src` is readable for `bytes`; the staging buffer has room for
    // them; a byte copy moves uninitialised bytes without reading them as values.
    unsafe {
        std::ptr::copy_nonoverlapping(src.cast::<MaybeUninit<u8>>(), staged.as_mut_ptr(), bytes);
        staged.set_len(bytes);
    }
    let dst = Address(dst as usize);
    stream::enqueue(
        on,
        Box::new(move || {
            // SAFETY: `dst` is a live allocation of `bytes` until the stream
            // reaches this operation (the caller's contract).
            unsafe {
                std::ptr::copy_nonoverlapping(staged.as_ptr(), dst.0 as *mut MaybeUninit<u8>, bytes)
            };
            Ok(())
        }),
    )
}

/// Device to host, or device to device: in stream order.
///
/// # Safety
/// Both ranges stay valid, and untouched by the host, until the stream
/// reaches the operation.
pub(crate) unsafe fn copy(
    dst: DevicePtr,
    src: DevicePtr,
    bytes: usize,
    on: StreamHandle,
) -> Result<(), DriverError> {
    let (dst, src) = (Address(dst as usize), Address(src as usize));
    stream::submit(
        on,
        GraphNodeKind::Memcpy,
        "",
        Arc::new(move || {
            // SAFETY: both ranges stay valid and untouched by the host until
            // the stream reaches this operation (the caller's contract); a
            // byte copy moves uninitialised bytes without reading them.
            unsafe {
                std::ptr::copy(
                    src.0 as *const MaybeUninit<u8>,
                    dst.0 as *mut MaybeUninit<u8>,
                    bytes,
                )
            };
            Ok(())
        }),
    )
}

/// Page-locked host memory on the simulator: an aligned host allocation.
pub(crate) fn host_alloc(bytes: usize) -> Result<*mut u8, DriverError> {
    allocate("cuMemHostAlloc", bytes, Place::PinnedHost, 1).map(|p| p as *mut u8)
}

/// Mapped page-locked memory on the simulator: the device reads and writes
/// host memory, so the device address is the host address.
pub(crate) fn host_device_pointer(ptr: *mut u8) -> Result<DevicePtr, DriverError> {
    match allocations().blocks.get(&(ptr as usize)) {
        Some(&(_, Place::PinnedHost)) => Ok(ptr as DevicePtr),
        _ => Err(invalid_value(
            "cuMemHostGetDevicePointer",
            format!("{ptr:?} is not page-locked memory of the simulator"),
        )),
    }
}

/// # Safety
/// `ptr` came from `host_alloc` and no queued work uses it.
pub(crate) unsafe fn host_free(ptr: *mut u8) -> Result<(), DriverError> {
    release("cuMemFreeHost", ptr as usize)
}
