//! The runtime's error type.

use crate::driver::DriverError;
use std::fmt;

/// `Result` with the runtime's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong on the host side; each message names what was
/// wrong and, where there is one, the limit or the kernel.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// No usable CUDA device: no driver, no GPU, or the driver failed to start.
    NoDevice {
        /// What the driver said.
        reason: String,
    },
    /// A device ordinal past the number of devices.
    InvalidDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices there are.
        count: usize,
    },
    /// A launch configuration the device or the kernel cannot run.
    InvalidLaunch {
        /// The kernel's entry point.
        kernel: &'static str,
        /// What was wrong, with the limit that was exceeded.
        reason: String,
    },
    /// A buffer argument lives on another device than the launch's stream.
    WrongDevice {
        /// The kernel's entry point.
        kernel: &'static str,
        /// The parameter's name.
        parameter: &'static str,
        /// The buffer's device.
        buffer_device: usize,
        /// The stream's device.
        stream_device: usize,
    },
    /// A copy between a buffer and a stream of different devices.
    DeviceMismatch {
        /// The buffer's device.
        buffer_device: usize,
        /// The stream's device.
        stream_device: usize,
    },
    /// A device allocation larger than the free device memory.
    OutOfMemory {
        /// Bytes asked for.
        requested: usize,
        /// Bytes free on the device when the allocation failed (0 if unknown).
        free: usize,
        /// The device's total memory (0 if unknown).
        total: usize,
    },
    /// A host and a device range of different lengths in one copy.
    LengthMismatch {
        /// What was being copied.
        operation: &'static str,
        /// The destination's element count.
        destination: usize,
        /// The source's element count.
        source: usize,
    },
    /// A kernel failed while running (a panic, a trap, an illegal address). The
    /// CUDA context is unusable afterwards: every later call fails too.
    KernelFailed {
        /// The kernel most recently launched on the stream (or device) that reported it.
        kernel: &'static str,
        /// Where the failure surfaced.
        context: String,
        /// The driver's error.
        driver: DriverError,
    },
    /// The kernels' PTX could not be loaded.
    ModuleLoad {
        /// The crate whose kernels failed to load.
        crate_name: &'static str,
        /// The driver's error.
        driver: DriverError,
        /// The JIT compiler's log.
        log: String,
    },
    /// A stream of one device made current while another device is current.
    StreamOnOtherDevice {
        /// The stream's device.
        stream_device: usize,
        /// The calling thread's current device.
        current_device: usize,
    },
    /// Elapsed time asked of an event that was never recorded.
    EventNotRecorded {
        /// `"start"` or `"end"`.
        which: &'static str,
    },
    /// Elapsed time asked of an event created with timing disabled.
    EventTimingDisabled {
        /// `"start"` or `"end"`.
        which: &'static str,
    },
    /// Event options CUDA does not allow together.
    InvalidEventOptions {
        /// Which options, and why.
        reason: &'static str,
    },
    /// Stream callbacks panicked; reported by the stream's next `synchronize`.
    CallbackPanicked {
        /// The stream.
        stream: String,
        /// The panic messages, in the order the callbacks ran.
        messages: Vec<String>,
    },
    /// A 2-D or 3-D view whose extents do not fit the memory it views.
    InvalidShape {
        /// The extents and the length.
        reason: String,
    },
    /// A pipeline that cannot run as asked.
    InvalidPipeline {
        /// What was wrong.
        reason: String,
    },
    /// A runtime call from inside a stream callback, where CUDA forbids CUDA calls.
    CalledFromCallback,
    /// Any other failed driver call.
    Driver(DriverError),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoDevice { reason } => write!(
                f,
                "no CUDA device is available ({reason}); this program needs an NVIDIA GPU and its driver"
            ),
            Error::InvalidDevice { ordinal, count } => write!(
                f,
                "device {ordinal} does not exist: this machine has {count} CUDA device(s)"
            ),
            Error::InvalidLaunch { kernel, reason } => {
                write!(f, "cannot launch kernel `{kernel}`: {reason}")
            }
            Error::WrongDevice { kernel, parameter, buffer_device, stream_device } => write!(
                f,
                "cannot launch kernel `{kernel}`: argument `{parameter}` is on device {buffer_device} but the stream is on device {stream_device}"
            ),
            Error::DeviceMismatch { buffer_device, stream_device } => write!(
                f,
                "cannot copy: the buffer is on device {buffer_device} but the stream is on device {stream_device}"
            ),
            Error::OutOfMemory { requested, free, total } => write!(
                f,
                "out of device memory: asked for {requested} bytes, {free} of {total} bytes free"
            ),
            Error::LengthMismatch { operation, destination, source } => write!(
                f,
                "{operation}: the destination holds {destination} elements but the source holds {source}"
            ),
            Error::KernelFailed { kernel, context, driver } => write!(
                f,
                "kernel `{kernel}` failed ({}: {}), reported by {context}; a panic or trap in a kernel ends its launch, and the CUDA context cannot be used again in this process",
                driver.name, driver.description
            ),
            Error::ModuleLoad { crate_name, driver, log } => {
                write!(f, "could not load the PTX of crate `{crate_name}`: {driver}")?;
                if !log.is_empty() {
                    write!(f, "\nJIT log:\n{log}")?;
                }
                Ok(())
            }
            Error::StreamOnOtherDevice { stream_device, current_device } => write!(
                f,
                "cannot make a stream of device {stream_device} current: the current device is {current_device}"
            ),
            Error::EventNotRecorded { which } => write!(
                f,
                "the {which} event was never recorded: record it on a stream before asking for elapsed time"
            ),
            Error::EventTimingDisabled { which } => write!(
                f,
                "the {which} event was created with timing disabled, so no elapsed time can be measured with it"
            ),
            Error::InvalidEventOptions { reason } => write!(f, "invalid event options: {reason}"),
            Error::CallbackPanicked { stream, messages } => write!(
                f,
                "{} callback(s) on {stream} panicked: {}",
                messages.len(),
                messages.join("; ")
            ),
            Error::InvalidShape { reason } => write!(f, "invalid shape: {reason}"),
            Error::InvalidPipeline { reason } => write!(f, "invalid pipeline: {reason}"),
            Error::CalledFromCallback => write!(
                f,
                "a stream callback called the GPU runtime; CUDA forbids CUDA calls inside stream callbacks"
            ),
            Error::Driver(e) => write!(f, "CUDA driver error: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<DriverError> for Error {
    fn from(e: DriverError) -> Self {
        Error::Driver(e)
    }
}
