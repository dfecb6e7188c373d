//! Launches refused for the resources a kernel uses, explained: the error
//! names the kernel, each resource (local memory, registers, shared memory),
//! how much the launch needs and the limit.
//!
//! The driver answers such a launch with a bare code
//! (`CUDA_ERROR_INVALID_VALUE` for a kernel whose local memory the device
//! cannot set aside, `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES` for registers,
//! `CUDA_ERROR_OUT_OF_MEMORY`), naming nothing. Where the limit is known
//! before the launch it is checked then, once per kernel and device
//! ([`check_function`]); otherwise the driver's refusal is explained after
//! the fact ([`explain`]), from the kernel's attributes and the device's
//! limits, read only then.
//!
//! The CPU simulator knows neither local memory nor registers: a kernel's
//! local arrays live on its simulated thread's stack (`GPU_SIM_STACK_BYTES`),
//! which a launch that needs more overflows, failing with a report that
//! names the stack size; its kernels report no local memory or registers,
//! so these checks never refuse there.

use crate::backend::{driver, status, DeviceLimits, DriverError, FunctionHandle, FunctionLimits};
use crate::device::DeviceState;
use crate::error::Error;

/// The local memory one thread may have, on every compute capability from
/// 2.0 on (the CUDA programming guide's table of technical specifications).
pub(crate) const MAX_LOCAL_BYTES_PER_THREAD: u64 = 512 * 1024;

/// An error if the kernel can never launch on this device: it needs more
/// local memory per thread than a thread may have. Checked once per kernel
/// and device, when its attributes are read.
pub(crate) fn check_function(
    kernel: &'static str,
    limits: &DeviceLimits,
    function: &FunctionLimits,
) -> Result<(), Error> {
    if u64::from(function.local_bytes_per_thread) <= MAX_LOCAL_BYTES_PER_THREAD {
        return Ok(());
    }
    let (major, minor) = limits.compute_capability;
    Err(Error::InvalidLaunch {
        kernel,
        reason: format!(
            "it uses {} bytes of local memory per thread (its local arrays and register spills), more than the {MAX_LOCAL_BYTES_PER_THREAD} bytes a thread may have on a device of compute capability {major}.{minor}; make its local arrays smaller, or keep the data in device memory (a `DeviceBuffer`) or shared memory",
            function.local_bytes_per_thread
        ),
    })
}

/// Whether the driver's refusal of `cuLaunchKernel` may be for resources.
/// (The launch's shape and arguments were checked before, so
/// `CUDA_ERROR_INVALID_VALUE` is left for the resources.)
pub(crate) fn is_resource_refusal(error: &DriverError) -> bool {
    matches!(
        error.code,
        status::INVALID_VALUE | status::LAUNCH_OUT_OF_RESOURCES | status::OUT_OF_MEMORY
    )
}

/// What a refused launch asked for.
pub(crate) struct Asked {
    pub(crate) function: FunctionHandle,
    pub(crate) block: [u32; 3],
    /// Dynamic shared memory per block, in bytes.
    pub(crate) shared: u32,
}

/// The error for a launch of `kernel` the driver refused with `error`
/// ([`is_resource_refusal`]): the resources the launch needs, each with its
/// limit, the one over its limit first, and the driver's own words.
#[cold]
#[inline(never)]
pub(crate) fn explain(
    kernel: &'static str,
    error: DriverError,
    asked: Asked,
    device: &DeviceState,
) -> Error {
    let function = match driver().function_limits(asked.function) {
        Ok(function) => function,
        Err(_) => {
            return Error::InvalidLaunch {
                kernel,
                reason: format!("the driver refused the launch ({error})"),
            }
        }
    };
    let free = driver()
        .memory_info(device.ordinal)
        .map_or(device.total_memory, |(free, _)| free);
    let stack = driver().stack_bytes_per_thread(device.ordinal).ok();
    let reason = describe(&error, &asked, &function, &device.limits, free, stack);
    Error::InvalidLaunch { kernel, reason }
}

/// The text of [`explain`], from the figures it read.
fn describe(
    error: &DriverError,
    asked: &Asked,
    function: &FunctionLimits,
    limits: &DeviceLimits,
    free_memory: usize,
    stack_per_thread: Option<usize>,
) -> String {
    let threads: u64 = asked.block.iter().map(|&d| u64::from(d)).product();
    // Local memory: set aside for every thread the device can run at once,
    // whichever threads the launch has.
    let resident =
        u64::from(limits.max_threads_per_multiprocessor) * u64::from(limits.multiprocessor_count);
    let stack = stack_per_thread.unwrap_or(0) as u64;
    let local = u64::from(function.local_bytes_per_thread);
    let set_aside = (local + stack).saturating_mul(resident);
    let stack_text = match stack_per_thread {
        Some(bytes) => format!(" plus its stack of {bytes} bytes (CU_LIMIT_STACK_SIZE)"),
        None => String::new(),
    };
    let local_text = format!(
        "local memory: {local} bytes per thread (its local arrays and register spills){stack_text}, of the {MAX_LOCAL_BYTES_PER_THREAD} a thread may have, set aside for each of the {resident} threads the device runs at once ({} multiprocessors of {} threads): {} of the {} of device memory free",
        limits.multiprocessor_count,
        limits.max_threads_per_multiprocessor,
        bytes(set_aside),
        bytes(free_memory as u64),
    );
    let registers = u64::from(function.registers_per_thread) * threads;
    let register_text = format!(
        "registers: {} per thread, {registers} for a block of {threads} threads, of the {} a block may have",
        function.registers_per_thread, limits.max_registers_per_block
    );
    let shared = u64::from(function.static_shared_bytes) + u64::from(asked.shared);
    let shared_text = format!(
        "shared memory: {} bytes static and {} dynamic per block, {shared} of the {} a block may have",
        function.static_shared_bytes, asked.shared, limits.max_shared_per_block_optin
    );
    let mut over = Vec::new();
    let mut within = Vec::new();
    let mut sort = |is_over: bool, text: String| {
        if is_over {
            over.push(text)
        } else {
            within.push(text)
        }
    };
    sort(
        local > MAX_LOCAL_BYTES_PER_THREAD || set_aside > free_memory as u64,
        local_text,
    );
    sort(
        registers > u64::from(limits.max_registers_per_block),
        register_text,
    );
    sort(
        shared > u64::from(limits.max_shared_per_block_optin),
        shared_text,
    );
    let mut reason = format!("the driver refused the launch ({error}) for the resources it needs");
    if over.is_empty() {
        reason.push_str("; none is over a limit known here: ");
    } else {
        reason.push_str(&format!("; over the limit: {}; ", over.join("; ")));
        reason.push_str("within their limits: ");
    }
    reason.push_str(&within.join("; "));
    reason
}

/// A byte count with a readable unit.
fn bytes(n: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    match n as f64 {
        b if b >= GIB => format!("{:.1} GiB", b / GIB),
        b if b >= MIB => format!("{:.1} MiB", b / MIB),
        _ => format!("{n} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: DeviceLimits = DeviceLimits::H100;

    fn kernel(local: u32, registers: u32, static_shared: u32) -> FunctionLimits {
        FunctionLimits {
            max_threads_per_block: 1024,
            static_shared_bytes: static_shared,
            max_dynamic_shared_bytes: 48 << 10,
            local_bytes_per_thread: local,
            registers_per_thread: registers,
        }
    }

    fn refused(code: i32, name: &str) -> DriverError {
        DriverError {
            call: "cuLaunchKernel",
            code,
            name: name.into(),
            description: "invalid argument".into(),
        }
    }

    fn asked(block: [u32; 3], shared: u32) -> Asked {
        Asked {
            function: FunctionHandle { raw: 0, device: 0 },
            block,
            shared,
        }
    }

    /// The kernel: a 320 KiB local array, refused by an H100 with
    /// a bare `CUDA_ERROR_INVALID_VALUE`.
    #[test]
    fn a_local_array_the_device_cannot_set_aside_is_named_with_its_size_and_the_limit() {
        let text = describe(
            &refused(status::INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE"),
            &asked([4, 1, 1], 0),
            &kernel(320 << 10, 40, 0),
            &H100,
            79 << 30,
            Some(1024),
        );
        assert!(
            text.starts_with("the driver refused the launch (cuLaunchKernel failed with CUDA_ERROR_INVALID_VALUE (1): invalid argument) for the resources it needs; over the limit: local memory: 327680 bytes per thread"),
            "{text}"
        );
        assert!(
            text.contains("plus its stack of 1024 bytes (CU_LIMIT_STACK_SIZE), of the 524288 a thread may have, set aside for each of the 270336 threads the device runs at once (132 multiprocessors of 2048 threads): 82.8 GiB of the 79.0 GiB of device memory free"),
            "{text}"
        );
        assert!(
            text.contains("within their limits: registers: 40 per thread, 160 for a block of 4 threads, of the 65536 a block may have; shared memory: 0 bytes static and 0 dynamic per block, 0 of the 232448 a block may have"),
            "{text}"
        );
    }

    #[test]
    fn registers_over_the_block_limit_are_named() {
        let text = describe(
            &refused(
                status::LAUNCH_OUT_OF_RESOURCES,
                "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
            ),
            &asked([32, 32, 1], 1024),
            &kernel(0, 255, 2048),
            &H100,
            79 << 30,
            None,
        );
        assert!(
            text.contains("over the limit: registers: 255 per thread, 261120 for a block of 1024 threads, of the 65536 a block may have; within their limits: local memory: 0 bytes per thread (its local arrays and register spills), of the 524288"),
            "{text}"
        );
        assert!(
            text.ends_with("shared memory: 2048 bytes static and 1024 dynamic per block, 3072 of the 232448 a block may have"),
            "{text}"
        );
    }

    #[test]
    fn a_refusal_with_nothing_over_a_known_limit_says_so_and_lists_them_all() {
        let text = describe(
            &refused(status::OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY"),
            &asked([256, 1, 1], 0),
            &kernel(16, 32, 0),
            &H100,
            1 << 30,
            Some(1024),
        );
        assert!(
            text.contains("CUDA_ERROR_OUT_OF_MEMORY (2): invalid argument) for the resources it needs; none is over a limit known here: local memory: 16 bytes per thread"),
            "{text}"
        );
        assert!(text.contains("; registers: 32 per thread"), "{text}");
        assert!(text.contains("; shared memory: 0 bytes static"), "{text}");
    }

    #[test]
    fn a_kernel_with_more_local_memory_than_a_thread_may_have_is_refused_before_launching() {
        assert!(check_function("k", &H100, &kernel(512 << 10, 32, 0)).is_ok());
        let error = check_function("k", &H100, &kernel((512 << 10) + 16, 32, 0)).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot launch kernel `k`: it uses 524304 bytes of local memory per thread (its local arrays and register spills), more than the 524288 bytes a thread may have on a device of compute capability 9.0; make its local arrays smaller, or keep the data in device memory (a `DeviceBuffer`) or shared memory"
        );
    }

    #[test]
    fn only_launch_refusals_the_resources_may_explain_are_explained() {
        assert!(is_resource_refusal(&refused(status::INVALID_VALUE, "")));
        assert!(is_resource_refusal(&refused(
            status::LAUNCH_OUT_OF_RESOURCES,
            ""
        )));
        assert!(is_resource_refusal(&refused(status::OUT_OF_MEMORY, "")));
        assert!(!is_resource_refusal(&refused(status::LAUNCH_FAILED, "")));
        assert!(!is_resource_refusal(&refused(status::INVALID_HANDLE, "")));
    }
}
