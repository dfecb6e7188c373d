//! Kernel entry points and their launches: the launch itself, and the
//! arguments of a graph's kernel node built without launching. The
//! configuration and its checks are in [`config`], the argument builder a
//! launcher hands its arguments to in [`arguments`], the check that host
//! and device compiled a kernel alike in [`agreement`], the shapes of
//! `#[vectorize]`'s launches in [`elementwise`].

mod agreement;
mod architecture;
mod arguments;
mod config;
mod elementwise;
mod length_bound;
mod refusal;
mod shared_limit;
mod slice_arg;

pub use arguments::LaunchArgs;

#[doc(hidden)]
pub use elementwise::{check_reduce_output, elementwise_len, elementwise_shape, reduce_shape};
#[doc(hidden)]
pub use length_bound::check_len_at_least;

pub use config::{DimValue, Dims, IntoDims, LaunchConfig, StreamRef};

use config::Shape;
use shared_limit::SharedLimit;

use crate::abi::{HostBody, HostEntry};
use crate::backend::{
    driver, FunctionHandle, FunctionLimits, GraphNodeHandle, KernelLaunch, MAX_DEVICES,
};
use crate::capture::CapturedKernel;
use crate::crate_identity::{check_module_owner, CrateIdentity};
use crate::device::DeviceState;
use crate::error::{Error, Result};
use crate::last_kernel::KernelId;
use crate::memory::tracking::GraphUse;
use crate::module::EmbeddedModule;
use crate::stream::{CaptureRecord, Stream};
use gpu_device::__private::interface::{Description, MapFacts, Param};
use std::ffi::{c_void, CString};
use std::sync::{Arc, OnceLock};

/// Which of a kernel's entry points a launch runs: an index into
/// `KernelFunction::entries` (see `gpu_device::entry`).
const GENERAL: usize = 0;
const ONE_DIMENSIONAL: usize = 1;
const Z_EXTENT_ONE: usize = 2;

/// One kernel instance of an [`EmbeddedModule`]: its entry points, resolved
/// per device on first launch. The `#[kernel]` macro makes one static per
/// instance; only `unsafe` code makes one (see [`new`](Self::new)).
pub struct KernelFunction {
    module: &'static EmbeddedModule,
    name: &'static str,
    /// The body as the CPU simulator runs it.
    host: HostEntry,
    /// The general entry point, the one for one-dimensional launches, and
    /// the one for launches whose z extents are 1 (kernels without it
    /// launch the general one there).
    entries: [Option<&'static str>; 3],
    /// The instance's interface as the host compiled it: its parameters,
    /// and the only block shape the kernel runs in, when it declares one
    /// (its entry points assume it, `gpu_device::entry`, so launches of
    /// any other shape are refused). Compared with the device's before
    /// the first launch on each device ([`agreement`]).
    interface: &'static Description,
    /// The name's number, for recording the last launched kernel.
    id: OnceLock<KernelId>,
    per_device: [[OnceLock<Result<FunctionInfo>>; 3]; MAX_DEVICES],
}

#[derive(Debug)]
struct FunctionInfo {
    handle: FunctionHandle,
    limits: FunctionLimits,
    /// The dynamic shared memory the function is currently allowed.
    dynamic_shared_limit: SharedLimit,
    /// Whether the kernel constrains its block beyond the driver's limits
    /// (a declared shape, launch bounds, an ownership map): only then does a
    /// launch run [`KernelFunction::check_block_shape`].
    constrains_block: bool,
}

/// The type of a kernel crate's `KERNEL_MODULE`: [`EmbeddedModule`] alone.
/// A launcher names its crate's `crate::KERNEL_MODULE`; where the crate has
/// none, `gpu_device::prelude` supplies a stand-in of another type, so that
/// the error is this trait's message rather than "cannot find value".
#[diagnostic::on_unimplemented(
    message = "this crate has no `KERNEL_MODULE` for its `#[kernel]` functions to load from",
    label = "a kernel of a crate with no `gpu_device::embed_kernels!()`",
    note = "`#[kernel]` functions belong in the package's library (src/lib.rs), which calls `gpu_device::embed_kernels!();` once and whose build.rs builds them to PTX; kernels in a binary (src/main.rs), an example or a test are not built for the GPU: move them to src/lib.rs and launch them as `my_crate::kernel[..](..)`"
)]
pub trait KernelModule: sealed::Sealed {}

impl KernelModule for EmbeddedModule {}

mod sealed {
    /// Keeps [`KernelModule`](super::KernelModule) to `EmbeddedModule`,
    /// which `KernelFunction::new` relies on.
    pub trait Sealed {}
    impl Sealed for crate::EmbeddedModule {}
}

impl KernelFunction {
    /// Kernel `name` of `module`: `entry` launches any shape, `entry_1d` only
    /// grids and blocks of the form `(n, 1, 1)` (its thread index witness
    /// relies on that), `entry_2d` (where the kernel has one) only launches
    /// whose grid and block have a z extent of 1 (its two-dimensional
    /// witness relies on that); `host` runs on the CPU simulator;
    /// `interface` is the instance's description as the host compiled it.
    ///
    /// `launcher` is the crate of the launcher (its
    /// [`crate_identity!()`](crate::crate_identity)). Panics (a compile
    /// error in the static the `#[kernel]` macro makes) where `module`
    /// serves another crate's launchers alone: its entry point of this
    /// name is that crate's kernel, whose parameters may differ.
    ///
    /// # Safety
    /// The entry points are those of one `#[kernel]` instance of `module`
    /// whose parameters `interface` describes, `host` runs the same
    /// instance's body with the same parameters, and `interface` is the
    /// instance's description as this crate compiled it: a launcher passes
    /// arguments by the description, and the runtime trusts that the entry
    /// points read what it passes (it compares the description with the
    /// one the device compiled, which catches a build that differs, not a
    /// description of another kernel).
    ///
    /// `module` is generic only for the error where it is not an
    /// [`EmbeddedModule`] (see [`KernelModule`]).
    pub const unsafe fn new<M: KernelModule>(
        module: &'static M,
        name: &'static str,
        [entry, entry_1d]: [&'static str; 2],
        entry_2d: Option<&'static str>,
        host: HostEntry,
        interface: &'static Description,
        launcher: CrateIdentity,
    ) -> Self {
        // SAFETY: `KernelModule` is sealed and implemented by
        // `EmbeddedModule` alone, so `M` is `EmbeddedModule`.
        let module: &'static EmbeddedModule =
            unsafe { &*(module as *const M).cast::<EmbeddedModule>() };
        if let Some(owner) = module.owner() {
            check_module_owner(name, &launcher, owner);
        }
        // Two status arrays would let two blocks own one tile of an output
        // (`gpu_device::lookback`): a compile error in the launcher's static.
        if interface.tile_status_params() > 1 {
            panic!("a #[kernel] takes at most one `&[DeviceAtomic<TileStatus>]` (look-back status words): with two, two blocks could own the same tile of an output, one through each");
        }
        KernelFunction {
            module,
            name,
            host,
            entries: [Some(entry), Some(entry_1d), entry_2d],
            interface,
            id: OnceLock::new(),
            per_device: [const {
                [
                    const { OnceLock::new() },
                    const { OnceLock::new() },
                    const { OnceLock::new() },
                ]
            }; MAX_DEVICES],
        }
    }

    /// The entry point a launch of `shape` runs (an index into `entries`):
    /// the one-dimensional entry for grids and blocks `(n, 1, 1)`, the
    /// z-extent-one entry (where the kernel has one) for other launches
    /// whose z extents are 1 and whose x and y positions fit in 32 bits, the
    /// general one otherwise. Each entry's witnesses rely on this choice
    /// (`gpu_device::entry`); `prepare`, which every launch path goes
    /// through, makes it here.
    fn entry_for(&self, shape: &Shape) -> usize {
        if shape.is_one_dimensional() {
            ONE_DIMENSIONAL
        } else if shape.has_z_extent_one()
            && shape.has_32_bit_positions()
            && self.entries[Z_EXTENT_ONE].is_some()
        {
            Z_EXTENT_ONE
        } else {
            GENERAL
        }
    }

    /// Refuses a launch whose block the kernel cannot run in: not its
    /// declared shape (its entry points assume it), more threads than its
    /// launch bounds allow (`.maxntid`), or another thread count than an
    /// output's ownership map needs (register tiles would overlap). `block`
    /// is the checked launch's block.
    fn check_block_shape(&self, block: [u32; 3]) -> Result<()> {
        let refuse = |reason: String| {
            Err(Error::InvalidLaunch {
                kernel: self.name,
                reason,
            })
        };
        let threads = block[0] as u64 * block[1] as u64 * block[2] as u64;
        if let Some(shape) = self.interface.block {
            if shape != block {
                return refuse(format!(
                    "this kernel runs only in blocks of ({}, {}, {}) threads (its `block` option); the launch has blocks of ({}, {}, {})",
                    shape[0], shape[1], shape[2], block[0], block[1], block[2]
                ));
            }
        }
        if let Some([max_threads, _]) = self.interface.launch_bounds {
            if threads > max_threads as u64 {
                return refuse(format!(
                    "this kernel's launch bounds allow blocks of at most {max_threads} threads (its `launch_bounds` option); the launch has blocks of ({}, {}, {}) = {threads}",
                    block[0], block[1], block[2]
                ));
            }
        }
        for (param, map) in self.block_sized_maps() {
            if threads != map.block_threads as u64 {
                return refuse(format!(
                    "its output `{}` is divided by the ownership map `{}`, made for blocks of {} threads; the launch has blocks of ({}, {}, {}) = {threads}, whose threads' tiles would overlap or leave gaps",
                    param.name, map.name, map.block_threads, block[0], block[1], block[2]
                ));
            }
        }
        Ok(())
    }

    /// Refuses a cooperative launch whose blocks cannot all be resident at
    /// once (its grid sync would wait forever for blocks that never start):
    /// more blocks than the device's multiprocessors times the blocks of
    /// this shape one keeps resident.
    fn check_resident(
        &self,
        device: &DeviceState,
        function: FunctionHandle,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
    ) -> Result<()> {
        let threads = block[0] * block[1] * block[2];
        let per_multiprocessor =
            driver().resident_blocks_per_multiprocessor(function, threads, shared)?;
        let multiprocessors = device.limits.multiprocessor_count;
        let limit = per_multiprocessor as u64 * multiprocessors as u64;
        let blocks = grid.iter().map(|&g| g as u64).product::<u64>();
        if blocks > limit {
            return Err(Error::InvalidLaunch {
                kernel: self.name,
                reason: format!(
                    "a cooperative launch (`#[kernel(cooperative)]`, for grid sync) needs every block resident at once: the grid ({}, {}, {}) has {blocks} blocks, and the device keeps at most {limit} blocks of ({}, {}, {}) threads with {shared} bytes of dynamic shared memory resident ({per_multiprocessor} per multiprocessor x {multiprocessors} multiprocessors)",
                    grid[0], grid[1], grid[2], block[0], block[1], block[2]
                ),
            });
        }
        Ok(())
    }

    /// The kernel's name, as errors report it.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The number of PTX parameters of the instance.
    #[inline]
    fn slot_count(&self) -> usize {
        self.host.param_sizes.len()
    }

    /// The parameters whose ownership map is made for blocks of a fixed
    /// thread count, with their maps.
    fn block_sized_maps(&self) -> impl Iterator<Item = (&'static Param, MapFacts)> {
        let params: &'static [Param] = self.interface.params;
        params.iter().filter_map(|param| {
            param
                .map
                .filter(|map| map.block_threads != 0)
                .map(|map| (param, map))
        })
    }

    /// Whether the interface constrains the block beyond the driver's
    /// limits: what [`check_block_shape`](Self::check_block_shape) checks.
    fn constrains_block(&self) -> bool {
        self.interface.block.is_some()
            || self.interface.launch_bounds.is_some()
            || self.block_sized_maps().next().is_some()
    }

    /// The entry point's handle and limits on `device`, found and checked
    /// at its first launch there.
    #[inline]
    fn info(&self, device: &DeviceState, which: usize) -> Result<&FunctionInfo> {
        match self.per_device[device.ordinal][which].get() {
            Some(Ok(info)) => Ok(info),
            _ => self.first_info(device, which),
        }
    }

    #[cold]
    #[inline(never)]
    fn first_info(&self, device: &DeviceState, which: usize) -> Result<&FunctionInfo> {
        let entry = self.entries[which].expect("entry_for picks an entry the kernel has");
        self.per_device[device.ordinal][which]
            .get_or_init(|| {
                architecture::check(self.module, self.name, entry, self.interface, device)?;
                let module = self.module.load(device)?;
                let name = CString::new(entry).expect("entry names have no NUL");
                let handle = driver().module_function(module, &name).map_err(|e| {
                    if e.is_kernel_fault() {
                        return device.error(e);
                    }
                    Error::ModuleLoad {
                        crate_name: self.module.crate_name(),
                        driver: e,
                        log: format!("entry point `{entry}` is not in the module"),
                    }
                })?;
                agreement::check(
                    self.module,
                    self.name,
                    entry,
                    self.interface,
                    &self.host,
                    device.limits.compute_capability,
                )?;
                let limits = driver()
                    .function_limits(handle)
                    .map_err(|e| device.error(e))?;
                refusal::check_function(self.name, &device.limits, &limits)?;
                Ok(FunctionInfo {
                    handle,
                    limits,
                    dynamic_shared_limit: SharedLimit::new(limits.max_dynamic_shared_bytes),
                    constrains_block: self.constrains_block(),
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Checks `config` for launching on `stream` and picks the entry point;
    /// also returns the stream's device.
    #[inline]
    fn prepare(
        &'static self,
        config: &LaunchConfig<'_>,
        stream: &Stream,
    ) -> Result<(Prepared, &'static DeviceState)> {
        let device = stream.device_state("a kernel launch")?;
        // The one-dimensional entry point is chosen only for shapes (n, 1, 1),
        // the z-extent-one entry only for z extents of 1 and positions below
        // 2^32: their witnesses are unique only there.
        let shape = config.shape(self.name, &device.limits)?;
        let which = self.entry_for(&shape);
        let info = self.info(device, which)?;
        // The entry points assume the declared block shape; checked before
        // the driver's limits, which a declared bound also sets (`.maxntid`),
        // so that the refusal names the declaration.
        if info.constrains_block {
            self.check_block_shape(shape.block)?;
        }
        let shared = shape.check_kernel_limits(self.name, &device.limits, &info.limits)?;
        let Shape { grid, block, .. } = shape;
        info.dynamic_shared_limit.allow(shared, |bytes| {
            driver()
                .set_max_dynamic_shared(info.handle, bytes)
                .map_err(|e| device.error(e))
        })?;
        if self.interface.cooperative {
            self.check_resident(device, info.handle, grid, block, shared)?;
        }
        let cluster = self.check_cluster(config.cluster_asked(), grid, device)?;
        // As on a GPU, the simulator runs the one-dimensional body for
        // one-dimensional launches only (its witness is unique only there),
        // and the z-extent-one body for launches whose z extents are 1.
        let host = HostBody {
            call: match which {
                ONE_DIMENSIONAL => self.host.call_1d,
                Z_EXTENT_ONE => self
                    .host
                    .call_2d
                    .expect("a kernel with a z-extent-one entry has its host body"),
                _ => self.host.call,
            },
            param_sizes: self.host.param_sizes,
        };
        let prepared = Prepared {
            function: info.handle,
            host,
            grid,
            block,
            shared,
            cooperative: self.interface.cooperative,
            cluster,
        };
        Ok((prepared, device))
    }

    /// Checks `config` for launching on `stream` and launches the entry
    /// point; in a capture, returns the capture and the node the launch
    /// made. (Not inlined into the argument builder, which is generic over
    /// the slot count: one copy, into which the checks inline.)
    ///
    /// # Safety
    /// `params` holds, in order, one pointer per PTX parameter of the entry
    /// point, each to a live value of that parameter's type; device pointers
    /// among them refer to memory that outlives the kernel and that no other
    /// argument of this launch writes.
    #[inline(never)]
    unsafe fn launch(
        &'static self,
        config: &LaunchConfig<'_>,
        stream: &Stream,
        params: &mut [*mut c_void],
    ) -> Result<Option<(Arc<CaptureRecord>, GraphNodeHandle)>> {
        let (prepared, device) = self.prepare(config, stream)?;
        if prepared.cooperative && stream.active_capture().is_some() {
            return Err(self.cooperative_in_a_graph());
        }
        if prepared.cluster.is_some() && stream.active_capture().is_some() {
            return Err(self.cluster_in_a_graph());
        }
        let id = *self.id.get_or_init(|| KernelId::register(self.name));
        // Ordered after the sets of the module's constants (held until queued).
        let _constants = self
            .module
            .constants()
            .before_launch(device.ordinal, stream)?;
        // SAFETY: forwarded to the caller; the configuration was checked
        // when it was prepared.
        let launched = unsafe {
            driver().launch(
                KernelLaunch {
                    name: self.name,
                    function: prepared.function,
                    host: prepared.host,
                    grid: prepared.grid,
                    block: prepared.block,
                    shared_bytes: prepared.shared,
                    cooperative: prepared.cooperative,
                    cluster: prepared.cluster,
                    params,
                },
                stream.handle(),
            )
        };
        match launched {
            Ok(()) => {
                stream.note_launch(id, device);
                self.note_captured(stream)
            }
            Err(e) if refusal::is_resource_refusal(&e) => {
                let asked = refusal::Asked {
                    function: prepared.function,
                    block: prepared.block,
                    shared: prepared.shared,
                };
                Err(refusal::explain(self.name, e, asked, device))
            }
            // A fault here is left over from an earlier kernel on the stream.
            Err(e) => Err(stream.error(e)),
        }
    }
}

impl KernelFunction {
    /// The refusal of a cluster launch in a graph (captured, or a graph
    /// node's arguments): graphs here make plain kernel nodes, which the
    /// simulator would run without clusters.
    pub(crate) fn cluster_in_a_graph(&self) -> Error {
        Error::InvalidLaunch {
            kernel: self.name,
            reason: "a cluster kernel (`#[kernel(cluster = ...)]`) is launched on a stream, not captured into a graph or made a graph node: graphs here make plain kernel nodes".into(),
        }
    }

    /// The launch's cluster shape: the kernel's declared one (`None` for a
    /// kernel that declares none). Refuses a cluster shape asked of a
    /// kernel that declares none or another one, a grid that is not a
    /// whole number of clusters, a cluster of more than 8 blocks (the
    /// portable size) and a device older than sm_90.
    fn check_cluster(
        &self,
        asked: Option<[i128; 3]>,
        grid: [u32; 3],
        device: &DeviceState,
    ) -> Result<Option<[u32; 3]>> {
        let refuse = |reason: String| {
            Err(Error::InvalidLaunch {
                kernel: self.name,
                reason,
            })
        };
        let shape = |s: [i128; 3]| format!("({}, {}, {})", s[0], s[1], s[2]);
        let Some(declared) = self.interface.cluster else {
            return match asked {
                Some(asked) => refuse(format!(
                    "the launch asks for thread-block clusters of {} blocks, and this kernel declares no cluster shape: a kernel that uses clusters declares its shape, `#[kernel(arch = \"sm_90\", cluster = (x, y, z))]`",
                    shape(asked)
                )),
                None => Ok(None),
            };
        };
        let wide = declared.map(i128::from);
        if let Some(asked) = asked.filter(|&a| a != wide) {
            return refuse(format!(
                "the launch asks for thread-block clusters of {} blocks, and this kernel declares clusters of {} (its `cluster` option): a cluster kernel runs only in its declared shape",
                shape(asked),
                shape(wide)
            ));
        }
        let blocks: u32 = declared.iter().product();
        if blocks > 8 {
            return refuse(format!(
                "its clusters of {} = {blocks} blocks are larger than the portable cluster size of 8 blocks",
                shape(wide)
            ));
        }
        if device.limits.compute_capability < (9, 0) {
            let (major, minor) = device.limits.compute_capability;
            return refuse(format!(
                "thread-block clusters need a device of compute capability 9.0 or later, and device {} has {major}.{minor}",
                device.ordinal
            ));
        }
        if (0..3).any(|axis| !grid[axis].is_multiple_of(declared[axis])) {
            return refuse(format!(
                "the grid ({}, {}, {}) is not a whole number of its clusters of {} blocks (its `cluster` option): each grid extent must be a multiple of the cluster's",
                grid[0],
                grid[1],
                grid[2],
                shape(wide)
            ));
        }
        Ok(Some(declared))
    }

    /// The refusal of a cooperative launch in a graph (captured, or a
    /// graph node's arguments): graphs here make plain kernel nodes.
    pub(crate) fn cooperative_in_a_graph(&self) -> Error {
        Error::InvalidLaunch {
            kernel: self.name,
            reason: "a cooperative kernel (`#[kernel(cooperative)]`) is launched on a stream, not captured into a graph or made a graph node: graphs here make plain kernel nodes, whose grid sync would have no cooperative launch".into(),
        }
    }

    /// Records, in a capture, which node a launch of this kernel just queued
    /// on `stream` made: the one node the stream's next captured work would
    /// depend on. Returns the capture and the node.
    fn note_captured(
        &'static self,
        stream: &Stream,
    ) -> Result<Option<(Arc<CaptureRecord>, GraphNodeHandle)>> {
        let Some(capture) = stream.active_capture() else {
            return Ok(None);
        };
        let dependencies = driver()
            .stream_capture_dependencies(stream.handle())
            .map_err(|e| stream.error(e))?;
        match dependencies[..] {
            [node] => {
                capture.add_kernel(CapturedKernel {
                    node,
                    function: self as *const Self as usize,
                    name: self.name,
                });
                Ok(Some((capture, node)))
            }
            _ => Err(Error::Capture {
                capture: capture.id,
                reason: format!(
                    "the launch of `{}` on {stream} left {} capture dependencies instead of its own node",
                    self.name,
                    dependencies.len()
                ),
            }),
        }
    }
}

/// A checked launch: the entry point, the simulator's body and the shape.
#[derive(Clone, Copy)]
struct Prepared {
    function: FunctionHandle,
    host: HostBody,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    cooperative: bool,
    cluster: Option<[u32; 3]>,
}

/// A kernel's checked arguments and launch shape, built by the typed
/// launcher without launching (`kernel_args!(k[grid, block](args))`), for
/// [`GraphExec::set_kernel_args`](crate::GraphExec::set_kernel_args). It
/// holds copies of the argument values and keeps the buffers it names alive.
/// Made by the argument builder alone ([`LaunchArgs::kernel_args`]).
pub struct KernelArgs {
    function: &'static KernelFunction,
    device: usize,
    prepared: Prepared,
    values: Vec<Box<[u128]>>,
    memory: Vec<GraphUse>,
}

impl KernelArgs {
    /// The kernel the arguments are for.
    pub fn kernel_name(&self) -> &'static str {
        self.function.name
    }

    /// The `KernelFunction`'s address, which tells kernels apart.
    pub(crate) fn function_id(&self) -> usize {
        self.function as *const KernelFunction as usize
    }

    /// The device the arguments were checked for.
    pub(crate) fn device(&self) -> usize {
        self.device
    }

    /// The memory the arguments use, each with how.
    pub(crate) fn memory(&self) -> &[GraphUse] {
        &self.memory
    }

    /// Runs `f` with the launch these arguments describe (on no stream).
    pub(crate) fn with_launch<R>(&mut self, f: impl FnOnce(KernelLaunch<'_>) -> R) -> R {
        let mut params: Vec<*mut c_void> = self
            .values
            .iter_mut()
            .map(|v| v.as_mut_ptr().cast::<c_void>())
            .collect();
        f(KernelLaunch {
            name: self.function.name,
            function: self.prepared.function,
            host: self.prepared.host,
            grid: self.prepared.grid,
            block: self.prepared.block,
            shared_bytes: self.prepared.shared,
            cooperative: self.prepared.cooperative,
            cluster: self.prepared.cluster,
            params: &mut params,
        })
    }
}

impl std::fmt::Debug for KernelArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelArgs")
            .field("kernel", &self.function.name)
            .field("grid", &self.prepared.grid)
            .field("block", &self.prepared.block)
            .finish()
    }
}

/// Names the instance `N` of a const-generic kernel (`#[kernel(16, 32)] fn
/// k<const TILE: usize>`): the launcher of `k` requires `Const<TILE>:
/// k::Instance`, which holds for the listed values only.
pub struct Const<const N: usize>;
