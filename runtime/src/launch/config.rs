//! A launch's configuration ([`LaunchConfig`]: grid, block, stream, dynamic
//! shared memory) and its checks against the device's and the kernel's
//! limits.

use crate::backend::{DeviceLimits, FunctionLimits};
use crate::error::{Error, Result};
use crate::stream::{current_stream, Stream};
use std::ops::Deref;

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
    cluster: Option<Dims>,
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
            cluster: None,
        }
    }

    /// Launches in thread-block clusters of `shape` blocks (CUDA's
    /// `cudaLaunchKernelEx` with a cluster dimension). A cluster kernel
    /// (`#[kernel(cluster = ...)]`) is launched in clusters of its declared
    /// shape with or without this; given, it must be that shape, and a
    /// kernel that declares none refuses it.
    pub fn cluster(mut self, shape: impl IntoDims) -> Self {
        self.cluster = Some(shape.into_dims());
        self
    }

    /// The cluster shape [`cluster`](Self::cluster) asked for, as given.
    pub(super) fn cluster_asked(&self) -> Option<[i128; 3]> {
        self.cluster.as_ref().map(|d| d.0)
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
    #[inline]
    pub fn resolve_stream(&self) -> Result<StreamRef<'s>> {
        Ok(match self.stream {
            Some(s) => StreamRef::Given(s),
            None => StreamRef::Current(current_stream()?),
        })
    }

    /// The launch's shape, checked against the device's limits: every grid
    /// and block extent between 1 and the device's limit, fewer than 2^64
    /// threads in all (the device's thread index witness relies on that),
    /// and a block within the device's threads-per-block limit. The kernel's
    /// own limits are [`Shape::check_kernel_limits`]'s.
    #[inline]
    pub(super) fn shape(&self, kernel: &'static str, limits: &DeviceLimits) -> Result<Shape> {
        match self.shape_within(limits) {
            Some(shape) => Ok(shape),
            None => Err(self.device_limit_error(kernel, limits)),
        }
    }

    /// The shape when within the device's limits (see [`shape`](Self::shape)),
    /// without building an error: the launch path's test.
    #[inline]
    fn shape_within(&self, limits: &DeviceLimits) -> Option<Shape> {
        let within =
            |value: i128, limit: u32| u32::try_from(value).ok().filter(|&v| v >= 1 && v <= limit);
        let mut grid = [0u32; 3];
        let mut block = [0u32; 3];
        for axis in 0..3 {
            grid[axis] = within(self.grid.0[axis], limits.max_grid_dim[axis])?;
            block[axis] = within(self.block.0[axis], limits.max_block_dim[axis])?;
        }
        let shape = Shape {
            grid,
            block,
            shared_bytes: self.shared_bytes,
        };
        let threads = shape.threads_per_block();
        if threads > limits.max_threads_per_block as u128 {
            return None;
        }
        // At most 2^96 blocks of at most 2^32 threads: the product fits.
        let blocks = shape.grid.iter().map(|&g| g as u128).product::<u128>();
        if blocks * threads > u64::MAX as u128 {
            return None;
        }
        Some(shape)
    }

    /// The error for a launch outside a device limit: the first one
    /// [`shape`](Self::shape) names.
    #[cold]
    #[inline(never)]
    fn device_limit_error(&self, kernel: &'static str, limits: &DeviceLimits) -> Error {
        let fail = |reason: String| Error::InvalidLaunch { kernel, reason };
        let mut grid = [0u32; 3];
        let mut block = [0u32; 3];
        for (axis, name) in ["x", "y", "z"].iter().enumerate() {
            let g = self.grid.0[axis];
            if g < 1 {
                return fail(format!(
                    "grid dimension {name} is {g}: every grid dimension must be at least 1"
                ));
            }
            if g > limits.max_grid_dim[axis] as i128 {
                return fail(format!(
                    "grid dimension {name} is {g}, above the device's limit of {}",
                    limits.max_grid_dim[axis]
                ));
            }
            grid[axis] = g as u32;
            let b = self.block.0[axis];
            if b < 1 {
                return fail(format!(
                    "block dimension {name} is {b}: every block dimension must be at least 1"
                ));
            }
            if b > limits.max_block_dim[axis] as i128 {
                return fail(format!(
                    "block dimension {name} is {b}, above the device's limit of {}",
                    limits.max_block_dim[axis]
                ));
            }
            block[axis] = b as u32;
        }
        let threads = block.iter().map(|&b| b as u128).product::<u128>();
        // Each product of three `u32`s fits in a `u128`; theirs may not.
        let total = grid
            .iter()
            .map(|&g| g as u128)
            .product::<u128>()
            .checked_mul(threads);
        if total.is_none_or(|total| total > u64::MAX as u128) {
            return fail(format!(
                "a grid of {}x{}x{} blocks of {threads} threads has 2^64 threads or more",
                grid[0], grid[1], grid[2]
            ));
        }
        fail(format!(
            "a block of {}x{}x{} = {threads} threads exceeds the device's limit of {} threads per block",
            block[0], block[1], block[2], limits.max_threads_per_block
        ))
    }
}

/// A launch's grid and block within the device's limits (as the driver takes
/// them) and its dynamic shared memory as requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Shape {
    pub(super) grid: [u32; 3],
    pub(super) block: [u32; 3],
    shared_bytes: i128,
}

impl Shape {
    /// Threads in one block.
    fn threads_per_block(&self) -> u128 {
        self.block.iter().map(|&b| b as u128).product()
    }

    /// Whether grid and block are both of the form `(n, 1, 1)`.
    pub(super) fn is_one_dimensional(&self) -> bool {
        self.grid[1] == 1 && self.grid[2] == 1 && self.block[1] == 1 && self.block[2] == 1
    }

    /// Whether grid and block both have a z extent of 1.
    pub(super) fn has_z_extent_one(&self) -> bool {
        self.grid[2] == 1 && self.block[2] == 1
    }

    /// Whether the launch has at most 2^32 threads along x and along y, so
    /// that every thread's global x and y positions fit in a `u32` (the
    /// `__2d` entry computes them in 32 bits).
    pub(super) fn has_32_bit_positions(&self) -> bool {
        (0..2).all(|axis| self.grid[axis] as u64 * self.block[axis] as u64 <= 1 << 32)
    }

    /// Checks the block against the kernel's threads-per-block limit (set by
    /// its register use) and the dynamic shared memory against what the
    /// device allows a block beside the kernel's static shared memory;
    /// returns the dynamic shared memory in bytes.
    #[inline]
    pub(super) fn check_kernel_limits(
        &self,
        kernel: &'static str,
        limits: &DeviceLimits,
        function: &FunctionLimits,
    ) -> Result<u32> {
        if self.threads_per_block() <= function.max_threads_per_block as u128
            && (0..=dynamic_shared_available(limits, function)).contains(&self.shared_bytes)
        {
            return Ok(self.shared_bytes as u32);
        }
        Err(self.kernel_limit_error(kernel, limits, function))
    }

    /// The error [`check_kernel_limits`](Self::check_kernel_limits) returns.
    #[cold]
    #[inline(never)]
    fn kernel_limit_error(
        &self,
        kernel: &'static str,
        limits: &DeviceLimits,
        function: &FunctionLimits,
    ) -> Error {
        let reason = if self.threads_per_block() > function.max_threads_per_block as u128 {
            format!(
                "a block of {} threads exceeds this kernel's limit of {} threads per block (set by its register use and launch bounds)",
                self.threads_per_block(),
                function.max_threads_per_block
            )
        } else {
            let available = dynamic_shared_available(limits, function);
            format!(
                "{} bytes of dynamic shared memory requested, but the device allows {} bytes per block and the kernel's static shared memory takes {}, leaving {available}",
                self.shared_bytes, limits.max_shared_per_block_optin, function.static_shared_bytes
            )
        };
        Error::InvalidLaunch { kernel, reason }
    }
}

/// The dynamic shared memory a block of the kernel may have: what the device
/// allows a block (opting in) less the kernel's static shared memory;
/// negative when the static part alone is over.
fn dynamic_shared_available(limits: &DeviceLimits, function: &FunctionLimits) -> i128 {
    limits.max_shared_per_block_optin as i128 - function.static_shared_bytes as i128
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

#[cfg(test)]
mod tests {
    use crate::backend::{DeviceLimits, FunctionLimits};
    use crate::launch::config::{LaunchConfig, Shape};

    const DEVICE: DeviceLimits = DeviceLimits::H100;
    const KERNEL: FunctionLimits = FunctionLimits {
        max_threads_per_block: 512,
        static_shared_bytes: 1 << 10,
        max_dynamic_shared_bytes: 48 << 10,
        local_bytes_per_thread: 0,
        registers_per_thread: 32,
    };

    /// The launch's error text, or "ok" with its shape and shared bytes.
    fn checked(config: LaunchConfig<'_>) -> String {
        let checked = config
            .shape("k", &DEVICE)
            .and_then(|shape| Ok((shape, shape.check_kernel_limits("k", &DEVICE, &KERNEL)?)));
        match checked {
            Ok((shape, shared)) => format!("ok {:?} {:?} {shared}", shape.grid, shape.block),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn launches_at_every_limit_pass_and_one_past_it_is_named() {
        let at_limits = LaunchConfig::new((i32::MAX as u32, 65535u32), (512, 1, 1))
            .shared_bytes((227 << 10) - (1 << 10));
        assert_eq!(
            checked(at_limits),
            format!(
                "ok [{}, 65535, 1] [512, 1, 1] {}",
                i32::MAX,
                (227 << 10) - (1 << 10)
            )
        );
        let deep = LaunchConfig::new((1, 1, 65535), (1, 8, 64));
        assert_eq!(checked(deep), "ok [1, 1, 65535] [1, 8, 64] 0");
        let cases: [(LaunchConfig<'_>, &str); 9] = [
            (
                LaunchConfig::new(0, 32),
                "grid dimension x is 0: every grid dimension must be at least 1",
            ),
            (LaunchConfig::new((1, -3), 32), "grid dimension y is -3"),
            (
                LaunchConfig::new((1, 1, 65536), 32),
                "grid dimension z is 65536, above the device's limit of 65535",
            ),
            (LaunchConfig::new(1, (1, 0)), "block dimension y is 0"),
            (
                LaunchConfig::new(1, (1, 1, 65)),
                "block dimension z is 65, above the device's limit of 64",
            ),
            (
                LaunchConfig::new(1, (64, 32)),
                "2048 threads exceeds the device's limit of 1024",
            ),
            (
                LaunchConfig::new(1, 1024),
                "1024 threads exceeds this kernel's limit of 512",
            ),
            (
                LaunchConfig::new(1, 32).shared_bytes(-1),
                "-1 bytes of dynamic shared memory requested",
            ),
            (
                LaunchConfig::new(1, 32).shared_bytes((227 << 10) - (1 << 10) + 1),
                "leaving 231424",
            ),
        ];
        for (config, expected) in cases {
            let text = checked(config);
            assert!(text.contains(expected), "expected {expected:?} in {text:?}");
        }
    }

    #[test]
    fn a_launch_far_past_2_to_the_64_threads_is_named_without_overflowing() {
        let unbounded = DeviceLimits {
            max_threads_per_block: u32::MAX,
            max_block_dim: [u32::MAX; 3],
            max_grid_dim: [u32::MAX; 3],
            ..DEVICE
        };
        let everything = (u32::MAX, u32::MAX, u32::MAX);
        let refused = LaunchConfig::new(everything, everything).shape("k", &unbounded);
        let text = refused.expect_err("2^192 threads").to_string();
        assert!(text.contains("has 2^64 threads or more"), "{text}");
    }

    #[test]
    fn a_launch_of_2_to_the_64_threads_is_refused_before_the_block_limits() {
        let huge = LaunchConfig::new((i32::MAX as u32, 65535u32, 65535u32), (1024, 1, 1));
        let text = checked(huge);
        assert!(text.contains("has 2^64 threads or more"), "{text}");
    }

    #[test]
    fn positions_fit_in_32_bits_up_to_2_to_the_32_threads_per_axis() {
        let fits = |grid: (u32, u32), block: (u32, u32)| {
            Shape {
                grid: [grid.0, grid.1, 1],
                block: [block.0, block.1, 1],
                shared_bytes: 0,
            }
            .has_32_bit_positions()
        };
        assert!(fits((1 << 22, 65535), (1024, 1024)));
        assert!(fits((1 << 27, 1), (32, 1)));
        // One thread more along x, or along y: the general entry.
        assert!(!fits(((1 << 27) + 1, 1), (32, 1)));
        assert!(!fits((1, (1 << 22) + 1), (1, 1024)));
        assert!(!fits((i32::MAX as u32, 1), (1024, 1)));
        // Values whose product is far past 2^32 are not "small".
        assert!(!fits((u32::MAX, 1), (u32::MAX, 1)));
    }
}
