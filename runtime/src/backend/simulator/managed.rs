//! Managed memory on the simulator: host memory that simulated kernels read
//! and write in place, counted against its device's capacity; prefetches
//! checked and queued in stream order (there is nothing to migrate), advice
//! checked. And 2-D copies: row by row, in stream order.

use super::super::{
    Advice, Copy2d, DevicePtr, DriverError, GraphNodeKind, Location, ManagedSupport, Memory2d,
    StreamHandle,
};
use super::errors::invalid_value;
use super::memory::{is_pinned, managed_range};
use super::stream;
use std::mem::MaybeUninit;
use std::sync::Arc;

/// What the simulated devices support of managed memory: `concurrent`
/// (the default: managed memory, host and device at once, as every Linux
/// GPU since Pascal), `host-exclusive` (managed memory the host may not
/// touch while a kernel runs: Windows, older GPUs) or `none`. For testing a
/// program's handling of such devices.
pub const SIM_MANAGED_MEMORY_ENV: &str = "GPU_SIM_MANAGED_MEMORY";

/// The simulated devices' managed memory support ([`SIM_MANAGED_MEMORY_ENV`]).
pub(crate) fn support() -> ManagedSupport {
    let (managed, concurrent) = match std::env::var(SIM_MANAGED_MEMORY_ENV).as_deref() {
        Err(_) | Ok("concurrent") => (true, true),
        Ok("host-exclusive") => (true, false),
        Ok("none") => (false, false),
        Ok(other) => {
            crate::diagnostics::report(
                crate::diagnostics::Level::Warn,
                &format!("ignoring {SIM_MANAGED_MEMORY_ENV}=`{other}`: use `concurrent`, `host-exclusive` or `none`; simulating `concurrent`"),
            );
            (true, true)
        }
    };
    ManagedSupport {
        managed,
        concurrent,
    }
}

/// Checks that `ptr..ptr + bytes` is managed memory and `location` a device
/// of the simulator (or the host), as the driver does for `call`.
fn check_range(
    call: &'static str,
    ptr: DevicePtr,
    bytes: usize,
    location: Location,
    devices: usize,
) -> Result<(), DriverError> {
    if managed_range(ptr, bytes).is_none() {
        return Err(invalid_value(
            call,
            format!("{ptr:#x} + {bytes} bytes is not a range of managed memory of the simulator"),
        ));
    }
    match location {
        Location::Device(d) if d >= devices => Err(invalid_value(
            call,
            format!("device {d} does not exist: the simulator has {devices} device(s)"),
        )),
        _ => Ok(()),
    }
}

/// `cuMemPrefetchAsync`: checked, then a no-op in stream order.
pub(crate) fn prefetch(
    ptr: DevicePtr,
    bytes: usize,
    to: Location,
    on: StreamHandle,
    devices: usize,
) -> Result<(), DriverError> {
    stream::check_device(on, "cuMemPrefetchAsync")?;
    check_range("cuMemPrefetchAsync", ptr, bytes, to, devices)?;
    stream::enqueue(on, Box::new(|| Ok(())))
}

/// `cuMemAdvise`: checked; nothing to change on the host.
pub(crate) fn advise(
    ptr: DevicePtr,
    bytes: usize,
    advice: Advice,
    devices: usize,
) -> Result<(), DriverError> {
    let location = match advice {
        Advice::ReadMostly => Location::Host,
        Advice::PreferredLocation(at) | Advice::AccessedBy(at) => at,
    };
    check_range("cuMemAdvise", ptr, bytes, location, devices)
}

/// A host or device address carried into a queued operation.
#[derive(Clone, Copy)]
struct Address(usize);

fn address(at: Memory2d) -> usize {
    match at {
        Memory2d::Host(p) => p as usize,
        Memory2d::Device(d) => d as usize,
    }
}

/// `cuMemcpy2DAsync`: a pageable host source is staged now, as the driver
/// does; the rows are copied when the stream gets there.
///
/// # Safety
/// As [`Driver::copy_2d_async`](super::super::Driver::copy_2d_async).
pub(crate) unsafe fn copy_2d(copy: &Copy2d, on: StreamHandle) -> Result<(), DriverError> {
    stream::check_device(on, "cuMemcpy2DAsync")?;
    let Copy2d {
        src,
        dst,
        width_bytes: width,
        rows,
    } = *copy;
    if width > src.pitch || width > dst.pitch {
        return Err(invalid_value(
            "cuMemcpy2DAsync",
            format!(
                "a row of {width} bytes is wider than a pitch ({} or {})",
                src.pitch, dst.pitch
            ),
        ));
    }
    let dst_at = Address(address(dst.at));
    let dst_pitch = dst.pitch;
    if let Memory2d::Host(p) = src.at {
        if !is_pinned(p) {
            let mut staged: Vec<MaybeUninit<u8>> = Vec::with_capacity(width * rows);
            for r in 0..rows {
                // SAFETY: row `r` of the source is readable for `width` bytes
                // (the caller's contract); the staging buffer has room for
                // `rows * width` bytes; bytes are moved, never read as values.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        p.add(r * src.pitch).cast::<MaybeUninit<u8>>(),
                        staged.as_mut_ptr().add(r * width),
                        width,
                    );
                }
            }
            // SAFETY: every byte was written above.
            unsafe { staged.set_len(width * rows) };
            return stream::enqueue(
                on,
                Box::new(move || {
                    for r in 0..rows {
                        // SAFETY: the destination's rows stay allocated and
                        // untouched until the stream gets here (the caller's
                        // contract); the staged rows are `width` bytes each.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                staged.as_ptr().add(r * width),
                                (dst_at.0 + r * dst_pitch) as *mut MaybeUninit<u8>,
                                width,
                            )
                        };
                    }
                    Ok(())
                }),
            );
        }
    }
    let (src_at, src_pitch) = (Address(address(src.at)), src.pitch);
    stream::submit(
        on,
        GraphNodeKind::Memcpy,
        "",
        Arc::new(move || {
            for r in 0..rows {
                // SAFETY: both ends hold `rows` rows of `width` bytes at their
                // pitches, allocated and untouched by the host until the
                // stream gets here, and do not overlap (the caller's
                // contract); bytes are moved, never read as values.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        (src_at.0 + r * src_pitch) as *const MaybeUninit<u8>,
                        (dst_at.0 + r * dst_pitch) as *mut MaybeUninit<u8>,
                        width,
                    )
                };
            }
            Ok(())
        }),
    )
}
