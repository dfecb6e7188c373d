//! Kernel assertions (`gpu_assert!`): each device's record, in mapped
//! page-locked host memory, that a failed assertion writes before its
//! kernel traps, and what the runtime reads back from it when the launch's
//! failure surfaces (a GPU context's own memory is unreadable by then).
//! The record's layout is `gpu_device::assert::AssertionRecord`'s, the
//! device code's. Each loaded module gets the record's device address in
//! its global `gpu_device::assert::RECORD_SYMBOL` (see `module.rs`).

use crate::backend::{driver, DevicePtr, MAX_DEVICES};
use gpu_device::assert::AssertionRecord;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

/// A device's record: its host address and its device address.
struct Record {
    host: *mut AssertionRecord,
    device: DevicePtr,
}

// SAFETY: the record is page-locked host memory that lives as long as the
// process (never freed); the host only reads it, field by field, after its
// `state` (an atomic) says a kernel completed it.
unsafe impl Send for Record {}
// SAFETY: as above.
unsafe impl Sync for Record {}

static RECORDS: [OnceLock<Option<Record>>; MAX_DEVICES] = [const { OnceLock::new() }; MAX_DEVICES];

fn record(device: usize) -> Option<&'static Record> {
    RECORDS
        .get(device)?
        .get_or_init(|| {
            let bytes = std::mem::size_of::<AssertionRecord>();
            let host = driver().host_alloc(device, bytes, true).ok()?;
            // SAFETY: a fresh allocation of `bytes` bytes: all zeros is an
            // empty record.
            unsafe { std::ptr::write_bytes(host, 0, bytes) };
            let device_address = driver().host_device_pointer(device, host).ok()?;
            Some(Record {
                host: host.cast(),
                device: device_address,
            })
        })
        .as_ref()
}

/// The device address of `device`'s record, made on first use; `None` when
/// it cannot be made (failed assertions then only end their launch).
pub(crate) fn device_address(device: usize) -> Option<DevicePtr> {
    record(device).map(|r| r.device)
}

/// A failed assertion, as its record holds it.
pub(crate) struct Failed {
    pub(crate) block: [u32; 3],
    pub(crate) thread: [u32; 3],
    pub(crate) file: String,
    pub(crate) line: u32,
    pub(crate) column: u32,
    pub(crate) message: String,
}

/// The failed assertion of `device`, if a kernel completed its record.
pub(crate) fn failed(device: usize) -> Option<Failed> {
    let record = RECORDS.get(device)?.get()?.as_ref()?;
    let r = record.host;
    // SAFETY: `r` is the live record (`Record`); `state` is read atomically,
    // the other fields only once it says they are written (a kernel wrote
    // them, then fenced, then set `state`), by value through raw places.
    unsafe {
        if (*r).state.load(Ordering::Acquire) != AssertionRecord::COMPLETE {
            return None;
        }
        let read = |p: *const u32| std::ptr::read_volatile(p);
        let file_len = (read(&raw const (*r).file_len) as usize).min((*r).file.len());
        let format_len = (read(&raw const (*r).format_len) as usize).min((*r).format.len());
        let arg_count = (read(&raw const (*r).arg_count) as usize).min((*r).args.len());
        let file = std::ptr::read_volatile(&raw const (*r).file);
        let format = std::ptr::read_volatile(&raw const (*r).format);
        let args = std::ptr::read_volatile(&raw const (*r).args);
        Some(Failed {
            block: std::ptr::read_volatile(&raw const (*r).block),
            thread: std::ptr::read_volatile(&raw const (*r).thread),
            file: String::from_utf8_lossy(&file[..file_len]).into_owned(),
            line: read(&raw const (*r).line),
            column: read(&raw const (*r).column),
            message: String::from_utf8_lossy(&gpu_device::__private::format_printf(
                &format[..format_len],
                &args[..arg_count],
            ))
            .into_owned(),
        })
    }
}
