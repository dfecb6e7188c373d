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
    pub(super) fn is_one_dimensional(&self) -> bool {
        self.grid.0[1] == 1 && self.grid.0[2] == 1 && self.block.0[1] == 1 && self.block.0[2] == 1
    }

    /// Whether grid and block both have a z extent of 1.
    pub(super) fn has_z_extent_one(&self) -> bool {
        self.grid.0[2] == 1 && self.block.0[2] == 1
    }

    /// Whether the launch has at most 2^32 threads along x and along y, so
    /// that every thread's global x and y positions fit in a `u32` (the
    /// `__2d` entry computes them in 32 bits).
    pub(super) fn has_32_bit_positions(&self) -> bool {
        (0..2).all(|axis| {
            self.grid.0[axis]
                .checked_mul(self.block.0[axis])
                .is_some_and(|threads| threads <= 1 << 32)
        })
    }

    /// Checks the configuration against the device's and the kernel's limits.
    pub(super) fn check(
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

#[cfg(test)]
mod tests {
    use crate::launch::config::LaunchConfig;

    #[test]
    fn positions_fit_in_32_bits_up_to_2_to_the_32_threads_per_axis() {
        let fits = |grid: (u64, u64), block: (u64, u64)| {
            LaunchConfig::new(grid, block).has_32_bit_positions()
        };
        assert!(fits((1 << 22, 65535), (1024, 1024)));
        assert!(fits((1 << 27, 1), (32, 1)));
        // One thread more along x, or along y: the general entry.
        assert!(!fits(((1 << 27) + 1, 1), (32, 1)));
        assert!(!fits((1, (1 << 22) + 1), (1, 1024)));
        assert!(!fits((i32::MAX as u64, 1), (1024, 1)));
        // Values that overflow the product are not "small".
        assert!(!fits((u64::MAX, 1), (u64::MAX, 1)));
    }
}
