//! Launch configuration, its checks, and the launch itself.

use crate::abi::{HostEntry, SliceArg};
use crate::backend::{
    driver, status, DeviceLimits, FunctionHandle, FunctionLimits, KernelLaunch, MAX_DEVICES,
};
use crate::device::DeviceState;
use crate::error::{Error, Result};
use crate::last_kernel::KernelId;
use crate::memory::{DeviceInput, DeviceOutput, RawView};
use crate::module::EmbeddedModule;
use crate::stream::current_stream;
use crate::stream::Stream;
use gpu_device::DeviceCopy;
use std::ffi::{c_void, CString};
use std::ops::Deref;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// Grid or block dimensions as given: `u32`, `usize`, `i32`, … or a tuple of
/// two or three of them. Checked at launch, so a negative or oversized value
/// is an error naming the dimension rather than a silent wrap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims([i128; 3]);

/// Conversion into [`Dims`].
pub trait IntoDims {
    /// The dimensions, missing ones set to 1.
    fn into_dims(self) -> Dims;
}

/// One dimension's value.
pub trait DimValue: Copy {
    /// The value, widened.
    fn widen(self) -> i128;
}

macro_rules! dim_value {
    ($($t:ty),*) => {$(
        impl DimValue for $t {
            fn widen(self) -> i128 { self as i128 }
        }
        impl IntoDims for $t {
            fn into_dims(self) -> Dims { Dims([self as i128, 1, 1]) }
        }
    )*};
}
dim_value!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

impl<A: DimValue, B: DimValue> IntoDims for (A, B) {
    fn into_dims(self) -> Dims {
        Dims([self.0.widen(), self.1.widen(), 1])
    }
}

impl<A: DimValue, B: DimValue, C: DimValue> IntoDims for (A, B, C) {
    fn into_dims(self) -> Dims {
        Dims([self.0.widen(), self.1.widen(), self.2.widen()])
    }
}

impl IntoDims for Dims {
    fn into_dims(self) -> Dims {
        self
    }
}

/// Where and how a kernel runs: grid, block, stream and dynamic shared memory.
/// Usually built by [`launch!`](crate::launch!).
#[derive(Clone, Debug)]
pub struct LaunchConfig<'s> {
    grid: Dims,
    block: Dims,
    shared_bytes: i128,
    stream: Option<&'s Stream>,
}

impl<'s> LaunchConfig<'s> {
    /// `grid` blocks of `block` threads on the current stream, with no dynamic
    /// shared memory.
    pub fn new(grid: impl IntoDims, block: impl IntoDims) -> LaunchConfig<'s> {
        LaunchConfig {
            grid: grid.into_dims(),
            block: block.into_dims(),
            shared_bytes: 0,
            stream: None,
        }
    }

    /// Runs on `stream` instead of the current stream.
    pub fn stream(mut self, stream: &'s Stream) -> Self {
        self.stream = Some(stream);
        self
    }

    /// Gives each block `bytes` of dynamic shared memory.
    pub fn shared_bytes(mut self, bytes: impl DimValue) -> Self {
        self.shared_bytes = bytes.widen();
        self
    }

    /// The stream to launch on: the one given, or the calling thread's current stream.
    pub fn resolve_stream(&self) -> Result<StreamRef<'s>> {
        Ok(match self.stream {
            Some(s) => StreamRef::Given(s),
            None => StreamRef::Current(current_stream()?),
        })
    }

    /// Whether grid and block are both of the form `(n, 1, 1)`.
    fn is_one_dimensional(&self) -> bool {
        self.grid.0[1] == 1 && self.grid.0[2] == 1 && self.block.0[1] == 1 && self.block.0[2] == 1
    }

    /// Checks the configuration against the device's and the kernel's limits.
    fn check(
        &self,
        kernel: &'static str,
        limits: &DeviceLimits,
        function: &FunctionLimits,
    ) -> Result<([u32; 3], [u32; 3], u32)> {
        let fail = |reason: String| Error::InvalidLaunch { kernel, reason };
        let mut grid = [0u32; 3];
        let mut block = [0u32; 3];
        for (axis, name) in ["x", "y", "z"].iter().enumerate() {
            let g = self.grid.0[axis];
            if g < 1 {
                return Err(fail(format!(
                    "grid dimension {name} is {g}: every grid dimension must be at least 1"
                )));
            }
            if g > limits.max_grid_dim[axis] as i128 {
                return Err(fail(format!(
                    "grid dimension {name} is {g}, above the device's limit of {}",
                    limits.max_grid_dim[axis]
                )));
            }
            grid[axis] = g as u32;
            let b = self.block.0[axis];
            if b < 1 {
                return Err(fail(format!(
                    "block dimension {name} is {b}: every block dimension must be at least 1"
                )));
            }
            if b > limits.max_block_dim[axis] as i128 {
                return Err(fail(format!(
                    "block dimension {name} is {b}, above the device's limit of {}",
                    limits.max_block_dim[axis]
                )));
            }
            block[axis] = b as u32;
        }
        let threads = block.iter().map(|&b| b as u64).product::<u64>();
        // The device's thread index witness relies on the launch having fewer
        // than 2^64 threads (so that it cannot wrap).
        let total = grid
            .iter()
            .chain(&block)
            .try_fold(1u64, |n, &d| n.checked_mul(d as u64));
        if total.is_none() {
            return Err(fail(format!(
                "a grid of {}x{}x{} blocks of {threads} threads has 2^64 threads or more",
                grid[0], grid[1], grid[2]
            )));
        }
        if threads > limits.max_threads_per_block as u64 {
            return Err(fail(format!(
                "a block of {}x{}x{} = {threads} threads exceeds the device's limit of {} threads per block",
                block[0], block[1], block[2], limits.max_threads_per_block
            )));
        }
        if threads > function.max_threads_per_block as u64 {
            return Err(fail(format!(
                "a block of {threads} threads exceeds this kernel's limit of {} threads per block (set by its register use)",
                function.max_threads_per_block
            )));
        }
        let dynamic = self.shared_bytes;
        let available =
            limits.max_shared_per_block_optin as i128 - function.static_shared_bytes as i128;
        if dynamic < 0 || dynamic > available {
            return Err(fail(format!(
                "{dynamic} bytes of dynamic shared memory requested, but the device allows {} bytes per block and the kernel's static shared memory takes {}, leaving {available}",
                limits.max_shared_per_block_optin, function.static_shared_bytes
            )));
        }
        Ok((grid, block, dynamic as u32))
    }
}

/// The stream a launch runs on: given in the configuration, or the current one.
pub enum StreamRef<'s> {
    /// The stream named in the launch.
    Given(&'s Stream),
    /// The calling thread's current stream.
    Current(Stream),
}

impl Deref for StreamRef<'_> {
    type Target = Stream;
    fn deref(&self) -> &Stream {
        match self {
            StreamRef::Given(s) => s,
            StreamRef::Current(s) => s,
        }
    }
}

/// One kernel entry point of an [`EmbeddedModule`], resolved per device on
/// first launch. The `#[kernel]` macro makes one static per entry point.
pub struct KernelFunction {
    module: &'static EmbeddedModule,
    name: &'static str,
    /// The body as the CPU simulator runs it.
    host: HostEntry,
    /// The general entry point and the one for one-dimensional launches.
    entries: [&'static str; 2],
    /// The name's number, for recording the last launched kernel.
    id: OnceLock<KernelId>,
    per_device: [[OnceLock<Result<FunctionInfo>>; 2]; MAX_DEVICES],
}

#[derive(Debug)]
struct FunctionInfo {
    handle: FunctionHandle,
    limits: FunctionLimits,
    /// The dynamic shared memory the function is currently allowed.
    dynamic_shared_limit: AtomicU32,
}

impl KernelFunction {
    /// Kernel `name` of `module`: `entry` launches any shape, `entry_1d` only
    /// grids and blocks of the form `(n, 1, 1)` (its thread index witness
    /// relies on that), `host` runs on the CPU simulator.
    pub const fn new(
        module: &'static EmbeddedModule,
        name: &'static str,
        entry: &'static str,
        entry_1d: &'static str,
        host: HostEntry,
    ) -> Self {
        KernelFunction {
            module,
            name,
            host,
            entries: [entry, entry_1d],
            id: OnceLock::new(),
            per_device: [const { [const { OnceLock::new() }, const { OnceLock::new() }] };
                MAX_DEVICES],
        }
    }

    /// The kernel's name, as errors report it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    fn info(&self, device: &DeviceState, which: usize) -> Result<&FunctionInfo> {
        let entry = self.entries[which];
        self.per_device[device.ordinal][which]
            .get_or_init(|| {
                let module = self.module.load(device)?;
                let name = CString::new(entry).expect("entry names have no NUL");
                let handle =
                    driver()
                        .module_function(module, &name)
                        .map_err(|e| Error::ModuleLoad {
                            crate_name: self.module.crate_name(),
                            driver: e,
                            log: format!("entry point `{entry}` is not in the module"),
                        })?;
                self.check_param_sizes(entry)?;
                let limits = driver().function_limits(handle)?;
                Ok(FunctionInfo {
                    handle,
                    limits,
                    dynamic_shared_limit: AtomicU32::new(limits.max_dynamic_shared_bytes),
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Checks that the PTX entry point `entry` takes parameters of the sizes
    /// this launcher passes: the driver reads each argument with the size the
    /// PTX declares, so a mismatch (a `#[cfg]` that gives a by-value struct
    /// another layout on the device, PTX built from other code) would read
    /// past the launcher's values. Done on both backends (the simulator reads
    /// the same PTX, so it refuses what a GPU would), except for modules
    /// without PTX (test scaffolding run only on the simulator).
    fn check_param_sizes(&self, entry: &str) -> Result<()> {
        if self.module.ptx().is_empty() {
            return Ok(());
        }
        let host = self.host.param_sizes;
        let reason = match self.module.entry_param_sizes(entry) {
            Some(Ok(ptx)) if ptx == host => return Ok(()),
            Some(Ok(ptx)) => format!(
                "its PTX entry point `{entry}` takes parameters of {ptx:?} bytes where the launcher passes {host:?}: host and device compiled the kernel differently (a `#[cfg]` on the target?) or the PTX is another crate's"
            ),
            Some(Err(unreadable)) => format!("its PTX entry point `{entry}` has an {unreadable}"),
            None => format!(
                "its PTX has no entry point `{entry}` (the kernel is compiled for the host only?)"
            ),
        };
        Err(Error::InvalidLaunch {
            kernel: self.name,
            reason,
        })
    }

    /// Launches the entry point.
    ///
    /// # Safety
    /// `params` holds, in order, one pointer per PTX parameter of the entry
    /// point, each to a live value of that parameter's type; device pointers
    /// among them refer to memory that outlives the kernel and that no other
    /// argument of this launch writes.
    pub unsafe fn launch(
        &'static self,
        config: &LaunchConfig<'_>,
        stream: &Stream,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        let device = stream.device_state()?;
        // The one-dimensional entry point is chosen only for shapes (n, 1, 1):
        // its thread index witness is unique only for those.
        let which = usize::from(config.is_one_dimensional());
        let info = self.info(device, which)?;
        let (grid, block, shared) = config.check(self.name, &device.limits, &info.limits)?;
        if shared > info.dynamic_shared_limit.load(Ordering::Relaxed) {
            driver().set_max_dynamic_shared(info.handle, shared)?;
            info.dynamic_shared_limit
                .fetch_max(shared, Ordering::Relaxed);
        }
        let id = *self.id.get_or_init(|| KernelId::register(self.name));
        // As on a GPU, the simulator runs the one-dimensional body for
        // one-dimensional launches only (its witness is unique only there).
        let mut host = self.host;
        if which == 1 {
            host.call = host.call_1d;
        }
        // SAFETY: forwarded to the caller; the configuration was checked above.
        let launched = unsafe {
            driver().launch(KernelLaunch {
                name: self.name,
                function: info.handle,
                host,
                grid,
                block,
                shared_bytes: shared,
                stream: stream.handle(),
                params,
            })
        };
        match launched {
            Ok(()) => {
                stream.note_launch(id, device);
                Ok(())
            }
            Err(e) if e.code == status::LAUNCH_OUT_OF_RESOURCES => Err(Error::InvalidLaunch {
                kernel: self.name,
                reason: format!(
                    "the device has too few registers or resources for blocks of {}x{}x{} threads",
                    block[0], block[1], block[2]
                ),
            }),
            // A fault here is left over from an earlier kernel on the stream.
            Err(e) => Err(stream.error(e)),
        }
    }
}

/// Names the instance `N` of a const-generic kernel (`#[kernel(16, 32)] fn
/// k<const TILE: usize>`): the launcher of `k` requires `Const<TILE>:
/// k::Instance`, which holds for the listed values only.
pub struct Const<const N: usize>;

impl SliceArg {
    /// An input argument; checks it lives on the stream's device.
    pub fn input<T: DeviceCopy>(
        arg: &impl DeviceInput<T>,
        stream_device: usize,
        kernel: &KernelFunction,
        parameter: &'static str,
    ) -> Result<SliceArg> {
        SliceArg::checked::<T>(arg.raw_view(), stream_device, kernel, parameter)
    }

    /// An output argument; checks it lives on the stream's device.
    pub fn output<T: DeviceCopy>(
        arg: &mut impl DeviceOutput<T>,
        stream_device: usize,
        kernel: &KernelFunction,
        parameter: &'static str,
    ) -> Result<SliceArg> {
        SliceArg::checked::<T>(arg.raw_view(), stream_device, kernel, parameter)
    }

    /// Checks the device; a slice with no bytes (empty, or of a zero-sized
    /// element type) gets a non-null, aligned dangling address (as Rust's
    /// empty slices have), since the device side builds a slice from the
    /// pointer without a branch, and a zero-sized allocation has no address.
    fn checked<T>(
        view: RawView,
        stream_device: usize,
        kernel: &KernelFunction,
        parameter: &'static str,
    ) -> Result<SliceArg> {
        if view.len == 0 || std::mem::size_of::<T>() == 0 {
            return Ok(SliceArg {
                ptr: std::mem::align_of::<T>() as u64,
                len: view.len,
            });
        }
        if view.device != stream_device {
            return Err(Error::WrongDevice {
                kernel: kernel.name,
                parameter,
                buffer_device: view.device,
                stream_device,
            });
        }
        if std::mem::size_of::<T>() == 0 {
            return Ok(SliceArg {
                ptr: std::mem::align_of::<T>() as u64,
                len: view.len,
            });
        }
        Ok(SliceArg {
            ptr: view.ptr,
            len: view.len,
        })
    }
}
