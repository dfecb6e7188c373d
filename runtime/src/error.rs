//! The runtime's error type.

use crate::backend::DriverError;
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
    /// A buffer argument lives on another device than the launch's stream,
    /// and that device has not been given peer access to it.
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
    /// A copy between two devices queued on a stream of a third.
    PeerCopyOnOtherDevice {
        /// The device copied from.
        source_device: usize,
        /// The device copied to.
        destination_device: usize,
        /// The stream's device.
        stream_device: usize,
    },
    /// Peer access asked for between devices the hardware does not link.
    PeerAccessUnsupported {
        /// The device that would reach the other's memory.
        device: usize,
        /// The device whose memory it would reach.
        peer: usize,
    },
    /// Collective arguments that cannot work: a wrong length, device, rank
    /// count or root.
    InvalidCollective {
        /// The operation (`all_reduce`, ...).
        operation: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// The collective library (NCCL) could not be loaded.
    NcclUnavailable {
        /// Where it was looked for, and how to install it.
        reason: String,
    },
    /// A call of the collective library (NCCL) failed.
    Nccl(DriverError),
    /// A communicator's unique id could not be written, read or parsed.
    UniqueIdExchange {
        /// What was wrong.
        reason: String,
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
    /// device's CUDA context is unusable afterwards: every later call on the
    /// device fails with the same error, on every stream (the simulator keeps
    /// the same rule for the simulated device). Other devices go on.
    KernelFailed {
        /// The kernel most recently launched on the stream (or device) that
        /// first reported the fault; every later report names the same.
        kernel: &'static str,
        /// Where the failure surfaced.
        context: String,
        /// The driver's error.
        driver: DriverError,
    },
    /// A kernel's `gpu_assert!` failed: its launch ended there (as CUDA's
    /// `assert` ends it), and the CUDA context is unusable afterwards, as
    /// after any kernel failure. The first failing thread's report.
    KernelAssertion {
        /// The kernel most recently launched on the stream (or device) that
        /// reported it.
        kernel: &'static str,
        /// `blockIdx` of the thread whose assertion failed.
        block: [u32; 3],
        /// `threadIdx` of the thread whose assertion failed.
        thread: [u32; 3],
        /// The assertion's file.
        file: String,
        /// The assertion's line.
        line: u32,
        /// The assertion's column.
        column: u32,
        /// The assertion's message (`assertion failed: <condition>` without one).
        message: String,
        /// Where the failure surfaced.
        context: String,
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
    /// A 2-D copy whose regions do not fit their memory, overlap, or whose
    /// rows or pitches the copy cannot take.
    InvalidCopy2d {
        /// The regions and what was wrong with them.
        reason: String,
    },
    /// A device that cannot hold managed memory the way
    /// [`ManagedBuffer`](crate::ManagedBuffer) needs.
    ManagedMemoryUnsupported {
        /// The device's ordinal.
        device: usize,
        /// What the device lacks.
        reason: &'static str,
    },
    /// Arguments an operation cannot work with, where no variant above
    /// names the case (the pipeline's stream and chunk counts, ...).
    InvalidArgument {
        /// The operation (`Pipeline::new`, ...).
        operation: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// An element index past the end of a buffer.
    IndexOutOfRange {
        /// The operation (`DeviceBuffer::get`, ...).
        operation: &'static str,
        /// The index given.
        index: usize,
        /// The buffer's length.
        len: usize,
    },
    /// A runtime call from inside a stream callback, where CUDA forbids CUDA calls.
    CalledFromCallback,
    /// A per-thread default stream used from another thread than the one it
    /// belongs to (CUDA has no handle for another thread's per-thread stream).
    PerThreadStreamOnOtherThread {
        /// The thread the stream belongs to.
        owner: String,
        /// The thread that used it.
        caller: String,
    },
    /// An event recorded on, or waited for by, a stream of another device.
    EventOnOtherDevice {
        /// The event's device.
        event_device: usize,
        /// The stream's device.
        stream_device: usize,
    },
    /// Elapsed time asked between events of two devices (CUDA has no common clock for them).
    EventsOfTwoDevices {
        /// The start event's device.
        start_device: usize,
        /// The end event's device.
        end_device: usize,
    },
    /// An allocation whose size in bytes does not fit in `usize`.
    SizeOverflow {
        /// The number of elements asked for.
        len: usize,
        /// The size of one element in bytes.
        element_bytes: usize,
    },
    /// An operation refused while a stream captures a graph: it would wait
    /// for, or run once, work that only exists in the graph being built.
    InCapture {
        /// What was refused (`synchronize`, `copy_to_host_sync`, ...).
        operation: &'static str,
        /// The capturing stream, or what was refused otherwise.
        stream: String,
        /// The capture's number.
        capture: u64,
        /// Why, and what to do instead.
        reason: &'static str,
    },
    /// A graph capture that cannot begin, join or end as asked.
    Capture {
        /// The capture's number (0 where there is none).
        capture: u64,
        /// What was wrong.
        reason: String,
    },
    /// Device buffers allocated inside a capture were still alive when it
    /// ended: their memory belongs to the graph. The capture's graph is
    /// discarded, and the buffers can no longer be used.
    CaptureEscaped {
        /// The capture's number.
        capture: u64,
        /// How many buffers.
        buffers: usize,
    },
    /// A buffer allocated inside a graph capture, used outside it.
    BufferOfCapture {
        /// The capture's number.
        capture: u64,
    },
    /// A graph's kernel node given the arguments of another kernel.
    GraphKernelMismatch {
        /// The node's kernel.
        node: &'static str,
        /// The kernel the arguments are for.
        given: &'static str,
    },
    /// The program requires a backend ([`require_backend`](crate::require_backend))
    /// other than the one it runs on.
    WrongBackend {
        /// The backend required.
        wanted: crate::Backend,
        /// The backend the process runs on.
        running: crate::Backend,
        /// Why that one was chosen.
        reason: String,
    },
    /// A crate's kernels were not built to PTX (a documentation build, or
    /// a failed device build that its host compile should have reported).
    KernelsNotBuilt {
        /// The crate whose kernels were not built.
        crate_name: &'static str,
        /// Why, as its build script wrote.
        reason: String,
    },
    /// A kernel needs a newer GPU architecture than the device has: its
    /// `#[kernel(arch = "...")]`, or the oldest architecture its crate's
    /// PTX was built for (`gpu_builder::PtxBuilder::archs`).
    ArchitectureTooOld {
        /// The kernel.
        kernel: &'static str,
        /// What it needs, e.g. `sm_80 (compute capability 8.0 or later)`.
        needs: String,
        /// The device's ordinal.
        device: usize,
        /// The device's name.
        device_name: String,
        /// The device's compute capability (major, minor).
        compute_capability: (u32, u32),
    },
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
                "cannot launch kernel `{kernel}`: argument `{parameter}` is on device {buffer_device} but the stream is on device {stream_device}; \
                 let device {stream_device} reach device {buffer_device}'s memory first (`Device::get({stream_device})?.enable_peer_access(Device::get({buffer_device})?)`), \
                 or copy the buffer to device {stream_device} (`copy_from_device`)"
            ),
            Error::DeviceMismatch { buffer_device, stream_device } => write!(
                f,
                "cannot copy: the buffer is on device {buffer_device} but the stream is on device {stream_device}"
            ),
            Error::PeerCopyOnOtherDevice { source_device, destination_device, stream_device } => write!(
                f,
                "cannot copy from device {source_device} to device {destination_device} on a stream of device {stream_device}: use a stream of either device"
            ),
            Error::PeerAccessUnsupported { device, peer } => write!(
                f,
                "device {device} cannot reach the memory of device {peer}: the hardware has no peer link between them (cuDeviceCanAccessPeer); copy the data between them instead (`copy_from_device`)"
            ),
            Error::InvalidCollective { operation, reason } => {
                write!(f, "invalid {operation}: {reason}")
            }
            Error::NcclUnavailable { reason } => write!(f, "NCCL is not available: {reason}"),
            Error::Nccl(e) => write!(f, "NCCL error: {e}"),
            Error::UniqueIdExchange { reason } => {
                write!(f, "cannot exchange the communicator's unique id: {reason}")
            }
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
                "kernel `{kernel}` failed ({}: {}), reported by {context}; a panic or trap in a kernel ends its launch, and the device (its CUDA context, or the simulated device) refuses every later call in this process with this error",
                driver.name, driver.description
            ),
            Error::KernelAssertion { kernel, block, thread, file, line, column, message, context } => write!(
                f,
                "kernel `{kernel}` failed an assertion at {file}:{line}:{column}, in block ({}, {}, {}), thread ({}, {}, {}): {message} (reported by {context}; the CUDA context cannot be used again in this process)",
                block[0], block[1], block[2], thread[0], thread[1], thread[2]
            ),
            Error::WrongBackend { wanted, running, reason } => write!(
                f,
                "this program needs {} but runs on {} ({reason}); {}",
                wanted.describe(),
                running.describe(),
                match wanted {
                    crate::Backend::Cuda => "it needs an NVIDIA GPU and its driver (is GPU_BACKEND=simulator set, or CUDA_VISIBLE_DEVICES empty?)",
                    crate::Backend::Simulator => "set GPU_BACKEND=simulator",
                }
            ),
            Error::ArchitectureTooOld {
                kernel,
                needs,
                device,
                device_name,
                compute_capability: (major, minor),
            } => write!(
                f,
                "kernel `{kernel}` needs {needs}, and device {device} ({device_name}) has compute capability {major}.{minor}"
            ),
            Error::KernelsNotBuilt { crate_name, reason } => write!(
                f,
                "the kernels of crate `{crate_name}` were not built to PTX, so they cannot run: {reason}"
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
            Error::InvalidCopy2d { reason } => write!(f, "invalid 2-D copy: {reason}"),
            Error::ManagedMemoryUnsupported { device, reason } => {
                write!(f, "device {device} cannot hold managed memory: {reason}")
            }
            Error::InvalidArgument { operation, reason } => {
                write!(f, "invalid argument to {operation}: {reason}")
            }
            Error::IndexOutOfRange { operation, index, len } => write!(
                f,
                "{operation}: index {index} is out of range for a buffer of {len} element(s)"
            ),
            Error::CalledFromCallback => write!(
                f,
                "a stream callback called the GPU runtime; CUDA forbids CUDA calls inside stream callbacks"
            ),
            Error::PerThreadStreamOnOtherThread { owner, caller } => write!(
                f,
                "the per-thread default stream of thread {owner} was used from thread {caller}; each thread has its own (`Stream::per_thread()` on that thread)"
            ),
            Error::EventOnOtherDevice { event_device, stream_device } => write!(
                f,
                "the event belongs to device {event_device} but the stream to device {stream_device}: record an event on the stream's own device"
            ),
            Error::EventsOfTwoDevices { start_device, end_device } => write!(
                f,
                "no elapsed time between an event of device {start_device} and one of device {end_device}: time events of one device (make the other devices' streams wait for an event of it)"
            ),
            Error::SizeOverflow { len, element_bytes } => write!(
                f,
                "{len} elements of {element_bytes} bytes do not fit in the address space"
            ),
            Error::InCapture { operation, stream, capture, reason } => write!(
                f,
                "`{operation}` is not allowed while {stream} captures graph capture {capture}: {reason}"
            ),
            Error::Capture { capture, reason } => {
                if *capture == 0 {
                    write!(f, "graph capture: {reason}")
                } else {
                    write!(f, "graph capture {capture}: {reason}")
                }
            }
            Error::CaptureEscaped { capture, buffers } => write!(
                f,
                "graph capture {capture}: {buffers} device buffer(s) allocated inside the capture were still alive at its end; memory allocated in a capture belongs to the graph, so drop such buffers inside the capture, or allocate them before it begins (the graph was discarded)"
            ),
            Error::BufferOfCapture { capture } => write!(
                f,
                "this device buffer was allocated inside graph capture {capture} and can only be used by the streams of that capture while it lasts"
            ),
            Error::GraphKernelMismatch { node, given } => write!(
                f,
                "the graph node runs kernel `{node}` but the arguments are for kernel `{given}`"
            ),
            Error::Driver(e) => write!(f, "CUDA driver error: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<DriverError> for Error {
    fn from(e: DriverError) -> Self {
        Error::from_driver(e, None, None, String::new)
    }
}

impl Error {
    /// A failed driver call as the runtime reports it; the one place where a
    /// kernel fault becomes [`Error::KernelFailed`] (naming `last_kernel`, the
    /// kernel launched last where the fault surfaced, and `context`), or
    /// [`Error::KernelAssertion`] when a `gpu_assert!` of `device` failed,
    /// and where a call refused inside a stream callback becomes
    /// [`Error::CalledFromCallback`].
    pub(crate) fn from_driver(
        driver: DriverError,
        last_kernel: Option<&'static str>,
        device: Option<usize>,
        context: impl FnOnce() -> String,
    ) -> Error {
        if driver.is_kernel_fault() {
            let context = context();
            if let Some(failed) = device.and_then(crate::assertion::failed) {
                return Error::KernelAssertion {
                    kernel: last_kernel.unwrap_or("<unknown>"),
                    block: failed.block,
                    thread: failed.thread,
                    file: failed.file,
                    line: failed.line,
                    column: failed.column,
                    message: failed.message,
                    context: if context.is_empty() {
                        driver.call.to_string()
                    } else {
                        format!("{} on {context}", driver.call)
                    },
                };
            }
            Error::KernelFailed {
                kernel: last_kernel.unwrap_or("<unknown>"),
                context: if context.is_empty() {
                    driver.call.to_string()
                } else {
                    format!("{} on {context}", driver.call)
                },
                driver,
            }
        } else if driver.code == crate::backend::status::NOT_PERMITTED
            && crate::callback::in_callback()
        {
            Error::CalledFromCallback
        } else {
            Error::Driver(driver)
        }
    }
}
