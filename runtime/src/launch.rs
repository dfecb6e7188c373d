//! Launch configuration, its checks, and the launch itself.

use crate::current::current_stream;
use crate::device::{DeviceLimits, DeviceState, MAX_DEVICES};
use crate::driver::{self, CUfunction, CUfunction_attribute as FnAttr};
use crate::error::{Error, Result};
use crate::memory::{DeviceInput, DeviceOutput};
use crate::module::EmbeddedModule;
use crate::simulator;
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
        function: &FunctionInfo,
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
    per_device: [[OnceLock<Result<FunctionInfo>>; 2]; MAX_DEVICES],
}

#[derive(Debug)]
struct FunctionInfo {
    handle: CUfunction,
    max_threads_per_block: u32,
    static_shared_bytes: u32,
    /// The dynamic shared memory the function is currently allowed.
    dynamic_shared_limit: AtomicU32,
}

// SAFETY: the function handle is only passed to the driver, which is thread-safe.
unsafe impl Send for FunctionInfo {}
// SAFETY: as above; the limit is atomic.
unsafe impl Sync for FunctionInfo {}

impl FunctionInfo {
    /// What the simulator's launches are checked against.
    fn simulated() -> FunctionInfo {
        FunctionInfo {
            handle: std::ptr::null_mut(),
            max_threads_per_block: 1024,
            static_shared_bytes: 0,
            dynamic_shared_limit: AtomicU32::new(48 * 1024),
        }
    }
}

impl Clone for FunctionInfo {
    fn clone(&self) -> Self {
        FunctionInfo {
            handle: self.handle,
            max_threads_per_block: self.max_threads_per_block,
            static_shared_bytes: self.static_shared_bytes,
            dynamic_shared_limit: AtomicU32::new(self.dynamic_shared_limit.load(Ordering::Relaxed)),
        }
    }
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
            per_device: [const { [const { OnceLock::new() }, const { OnceLock::new() }] };
                MAX_DEVICES],
        }
    }

    /// The kernel's name, as errors report it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The entry name behind a pointer stored by `Stream::note_launch`.
    pub(crate) fn name_of(ptr: *const KernelFunction) -> &'static str {
        if ptr.is_null() {
            "<none launched>"
        } else {
            // SAFETY: only pointers to `'static` KernelFunctions are stored.
            unsafe { &*ptr }.name
        }
    }

    fn info(&self, device: &DeviceState, which: usize) -> Result<&FunctionInfo> {
        let entry = self.entries[which];
        self.per_device[device.ordinal][which]
            .get_or_init(|| {
                let module = self.module.load(device)?;
                let name = CString::new(entry).expect("entry names have no NUL");
                let handle =
                    driver::module_function(module, &name).map_err(|e| Error::ModuleLoad {
                        crate_name: self.module.crate_name(),
                        driver: e,
                        log: format!("entry point `{entry}` is not in the module"),
                    })?;
                let attr = |a| driver::function_attribute(handle, a).map(|v| v.max(0) as u32);
                let static_shared_bytes = attr(FnAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
                Ok(FunctionInfo {
                    handle,
                    max_threads_per_block: attr(FnAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
                    static_shared_bytes,
                    dynamic_shared_limit: AtomicU32::new(attr(
                        FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    )?),
                })
            })
            .as_ref()
            .map_err(Clone::clone)
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
        if crate::backend::simulated() {
            let info = FunctionInfo::simulated();
            let (grid, block, shared) = config.check(self.name, &device.limits, &info)?;
            // As on a GPU, the one-dimensional entry runs one-dimensional
            // launches only (its witness is unique only there).
            let mut host = self.host;
            if config.is_one_dimensional() {
                host.call = host.call_1d;
            }
            let code = simulator::executor::launch(
                self.name,
                host,
                params,
                grid,
                block,
                shared,
                stream.as_raw(),
            );
            stream.note_launch(self, device);
            return driver::check("launch", code).map_err(Error::Driver);
        }
        // The one-dimensional entry point is chosen only for shapes (n, 1, 1):
        // its thread index witness is unique only for those.
        let which = usize::from(config.is_one_dimensional());
        let info = self.info(device, which)?;
        let (grid, block, shared) = config.check(self.name, &device.limits, info)?;
        if shared > info.dynamic_shared_limit.load(Ordering::Relaxed) {
            driver::set_function_attribute(
                info.handle,
                FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared as i32,
            )?;
            info.dynamic_shared_limit
                .fetch_max(shared, Ordering::Relaxed);
        }
        // SAFETY: forwarded to the caller; the configuration was checked above.
        let code =
            unsafe { driver::launch(info.handle, grid, block, shared, stream.as_raw(), params) };
        match code {
            driver::SUCCESS => {
                stream.note_launch(self, device);
                Ok(())
            }
            driver::ERROR_LAUNCH_OUT_OF_RESOURCES => Err(Error::InvalidLaunch {
                kernel: self.name,
                reason: format!(
                    "the device has too few registers or resources for blocks of {}x{}x{} threads",
                    block[0], block[1], block[2]
                ),
            }),
            // A fault here is left over from an earlier kernel on the stream.
            code => Err(stream.error("cuLaunchKernel", code)),
        }
    }
}

/// A kernel instance's body as the CPU simulator calls it: `call` (the
/// general entry point) and `call_1d` (the one for one-dimensional launches)
/// take one pointer per PTX parameter, as the entry points do, whose sizes
/// are `param_sizes` (the simulator copies the values at launch).
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct HostEntry {
    pub call: unsafe fn(*const *mut c_void),
    pub call_1d: unsafe fn(*const *mut c_void),
    pub param_sizes: &'static [usize],
}

/// Names the instance `N` of a const-generic kernel (`#[kernel(16, 32)] fn
/// k<const TILE: usize>`): the launcher of `k` requires `Const<TILE>:
/// k::Instance`, which holds for the listed values only.
pub struct Const<const N: usize>;

/// A slice argument as the entry point receives it: address and length.
#[doc(hidden)]
pub struct SliceArg {
    pub ptr: u64,
    pub len: usize,
}

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

    /// Checks the device; an empty slice, or a slice of a zero-sized type,
    /// gets a non-null, aligned dangling address (as Rust's empty slices
    /// have), since the device side builds a slice from the pointer without
    /// a branch.
    fn checked<T>(
        view: crate::memory::RawView,
        stream_device: usize,
        kernel: &KernelFunction,
        parameter: &'static str,
    ) -> Result<SliceArg> {
        if view.len == 0 {
            return Ok(SliceArg {
                ptr: std::mem::align_of::<T>() as u64,
                len: 0,
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
