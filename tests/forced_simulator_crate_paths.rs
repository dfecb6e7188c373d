//! The macros' path overrides: kernels, a `DeviceCopy` struct and shared
//! arrays declared with `gpu_device` and `gpu_runtime` under other names
//! (`dev` and `rt`, and a module re-exporting them as a facade crate would),
//! their embedded module somewhere other than `crate::KERNEL_MODULE` (this
//! crate has none, so a launcher that ignored `module = "..."` would not
//! compile), launched and checked. The crate paths are written
//! `unsafe(device_crate = "...")`: each leads to the genuine crate (renamed,
//! or re-exported), which is the promise `unsafe(...)` makes; without it
//! they do not compile (tests/ui/kernel/kernel_override_fake_crate_without_unsafe.rs).
//!
//! The kernels are this test crate's own, with no PTX: the simulator is
//! forced for this binary (it runs kernels from their host entry points), so
//! it runs the same on a GPU machine as in CI. That the overrides replace
//! every default path (none is left to resolve by chance through this
//! crate's own `gpu_runtime` dependency) is checked on the expansions by
//! gpu-macros' unit tests.

extern crate gpu_device as dev;
extern crate gpu_runtime as rt;

use rt::{backend, launch, Backend, DeviceBuffer, Stream, BACKEND_ENV};
use std::sync::Once;

/// The crates under other names, as a facade crate re-exports them.
mod reexports {
    pub use gpu_device as device;
    pub use gpu_runtime as runtime;

    /// `gpu_device`'s items re-exported by a glob, as a facade that adds
    /// items of its own would: the genuine items, so the
    /// `unsafe(device_crate = ...)` promise holds.
    pub mod glob {
        pub use gpu_device::*;
    }
}

mod kernels {
    use dev::prelude::*;

    // SAFETY: the empty PTX is never loaded by a GPU: this binary forces
    // the simulator (see `simulator()`), which runs the kernels from their
    // host entry points. Were it loaded on a GPU, it would have no entry
    // point, and a launch would fail with an error.
    pub static MODULE: rt::EmbeddedModule =
        unsafe { rt::EmbeddedModule::new("kernel_path_overrides", "") };

    /// `out[i] = factor * x[i]`; the crates by their extern-prelude names,
    /// the module by a path relative to this module.
    #[kernel(
        unsafe(device_crate = "dev"),
        unsafe(runtime_crate = "rt"),
        module = "self::MODULE"
    )]
    pub fn scale(factor: f32, x: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread_index();
        if let Some(&v) = x.get(i.get()) {
            out.set(i, factor * v);
        }
    }

    /// Each thread writes `row * 1000 + col` of its 2-D witness: a declared
    /// block shape and the `__2d` entry point (the body calls
    /// `thread_index_2d`), with the crates renamed.
    #[kernel(
        block = (8, 4),
        unsafe(device_crate = "crate::reexports::glob"),
        unsafe(runtime_crate = "rt"),
        module = "self::MODULE"
    )]
    pub fn coordinates(mut out: DisjointSlice2d<u32>) {
        let i = thread_index_2d();
        out.set(i, (i.row() * 1000 + i.col()) as u32);
    }

    /// `coordinates` on a 32-bit matrix view: its launcher converts the
    /// extents to `u32` (refusing a matrix of more than `u32::MAX`
    /// elements) through the overridden runtime path.
    #[kernel(
        unsafe(device_crate = "dev"),
        unsafe(runtime_crate = "crate::reexports::runtime"),
        module = "self::MODULE"
    )]
    pub fn coordinates_u32(mut out: DisjointSlice2dU32<u32>) {
        let i = thread_index_2d();
        if let Some((row, col)) = out.position(i) {
            out.set(i, row * 1000 + col);
        }
    }

    /// A value parameter of a struct whose derive names `gpu_device`
    /// through the facade.
    #[derive(Clone, Copy, DeviceCopy)]
    #[device_copy(unsafe(crate = "crate::reexports::device"))]
    #[repr(C)]
    pub struct Affine {
        pub scale: f32,
        pub offset: f32,
    }

    /// `out[i] = p.scale * x[i] + p.offset`; every path through the facade,
    /// given after the instance-less attribute's options.
    #[kernel(
        unsafe(device_crate = "crate::reexports::device"),
        unsafe(runtime_crate = "crate::reexports::runtime"),
        module = "crate::kernels::MODULE"
    )]
    pub fn affine(p: Affine, x: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread_index();
        if let Some(&v) = x.get(i.get()) {
            out.set(i, p.scale * v + p.offset);
        }
    }

    /// A generic kernel with a shared array of its type parameter, the
    /// options between the instance types: `out[i]` is the value of thread
    /// `t ^ 1` of its block.
    #[kernel(
        f32,
        unsafe(device_crate = "dev"),
        u64,
        unsafe(runtime_crate = "rt"),
        module = "MODULE"
    )]
    pub fn swap_pairs<T: DeviceCopy + dev::shared::SharedElement>(
        input: &[T],
        mut out: DisjointSlice<T>,
        block: Block,
    ) {
        let tile = shared_array!(T; 64, unsafe(device_crate = "crate::reexports::device"));
        let mut w = block;
        let i = thread_index();
        if let Some(&v) = input.get(i.get()) {
            tile.set_own(&mut w, 0, v);
        }
        let r = w.sync();
        let partner = r.thread_rank() ^ 1;
        if (i.get() ^ 1) < input.len() && partner < r.size() {
            out.set(i, tile.get(&r, partner));
        }
    }

    pub mod nested {
        use dev::prelude::*;

        /// A const-generic kernel one module further down, its module by a
        /// `super::` path: each block of `TILE` threads reverses its part
        /// of `input` through a padded matrix of one row.
        #[kernel(
            8,
            16,
            unsafe(device_crate = "dev"),
            unsafe(runtime_crate = "rt"),
            module = "super::MODULE"
        )]
        pub fn reverse_tiles<const TILE: usize>(
            input: &[u32],
            mut out: DisjointSlice<u32>,
            block: Block,
        ) {
            let tile = shared_array!(u32; 1, TILE, padding = 1, unsafe(device_crate = "dev"));
            let mut w = block;
            let i = thread_index();
            let base = block_idx().x as usize * TILE;
            tile.fill(&mut w, |_, col| input.get(base + col).copied().unwrap_or(0));
            let r = w.sync();
            let t = r.thread_rank();
            if t < TILE {
                out.set(i, tile.get(&r, 0, TILE - 1 - t));
            }
        }
    }
}

fn simulator() -> Stream {
    static FORCE: Once = Once::new();
    // Every test calls this first, so no thread reads the environment while
    // it is set.
    FORCE.call_once(|| std::env::set_var(BACKEND_ENV, "simulator"));
    assert_eq!(backend(), Backend::Simulator);
    Stream::new().unwrap()
}

#[test]
fn kernels_with_renamed_crates_launch() {
    let stream = simulator();
    let x: Vec<f32> = (0..100).map(|i| i as f32).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(100, &stream).unwrap();

    launch!(kernels::scale[4, 32, stream](3.0f32, &dx, &mut out)).unwrap();
    let expected: Vec<f32> = x.iter().map(|v| 3.0 * v).collect();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), expected);

    let p = kernels::Affine {
        scale: -2.0,
        offset: 0.5,
    };
    launch!(kernels::affine[4, 32, stream](p, &dx, &mut out)).unwrap();
    let expected: Vec<f32> = x.iter().map(|v| -2.0 * v + 0.5).collect();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), expected);
}

#[test]
fn a_declared_block_shape_and_the_2d_entry_with_renamed_crates() {
    let stream = simulator();
    let (rows, cols) = (8usize, 16usize);
    let mut out = DeviceBuffer::to_device_sync(&vec![u32::MAX; rows * cols], &stream).unwrap();
    launch!(kernels::coordinates[(2, 2), (8, 4), stream](
        out.view_2d_mut(rows, cols).unwrap()
    ))
    .unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for row in 0..rows {
        for col in 0..cols {
            assert_eq!(
                got[row * cols + col],
                (row * 1000 + col) as u32,
                "({row}, {col})"
            );
        }
    }
    // The launcher knows the declared shape: any other is refused.
    let refused = launch!(kernels::coordinates[(1, 1), (16, 8), stream](
        out.view_2d_mut(rows, cols).unwrap()
    ));
    let message = refused.expect_err("a block of another shape").to_string();
    assert!(message.contains("coordinates"), "{message}");
}

#[test]
fn a_32_bit_matrix_view_with_renamed_crates() {
    let stream = simulator();
    let (rows, cols) = (5usize, 7usize);
    let mut out = DeviceBuffer::to_device_sync(&vec![u32::MAX; rows * cols], &stream).unwrap();
    launch!(kernels::coordinates_u32[(1, 1), (8, 8), stream](
        out.view_2d_mut(rows, cols).unwrap()
    ))
    .unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for row in 0..rows {
        for col in 0..cols {
            assert_eq!(
                got[row * cols + col],
                (row * 1000 + col) as u32,
                "({row}, {col})"
            );
        }
    }
}

#[test]
fn generic_kernels_with_renamed_crates_launch() {
    let stream = simulator();
    let n = 100;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(n, &stream).unwrap();
    launch!(kernels::swap_pairs[n.div_ceil(64), 64, stream](&dx, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for (i, &got) in got.iter().enumerate() {
        let expected = if (i ^ 1) < n { (i ^ 1) as f32 } else { 0.0 };
        assert_eq!(got, expected, "f32 element {i}");
    }
    let wide: Vec<u64> = (0..n as u64).map(|i| i << 40).collect();
    let dwide = DeviceBuffer::to_device_sync(&wide, &stream).unwrap();
    let mut out = DeviceBuffer::<u64>::zeroed_on(n, &stream).unwrap();
    launch!(kernels::swap_pairs[n.div_ceil(32), 32, stream](&dwide, &mut out)).unwrap();
    let got = out.copy_to_host_sync(&stream).unwrap();
    for i in 0..n {
        assert_eq!(got[i], wide[i ^ 1], "u64 element {i}");
    }

    let input: Vec<u32> = (0..48).collect();
    let din = DeviceBuffer::to_device_sync(&input, &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(48, &stream).unwrap();
    launch!(kernels::nested::reverse_tiles::<8>[6, 8, stream](&din, &mut out)).unwrap();
    let expected: Vec<u32> = (0..48).map(|i| i / 8 * 8 + 7 - i % 8).collect();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), expected);
    launch!(kernels::nested::reverse_tiles::<16>[3, 16, stream](&din, &mut out)).unwrap();
    let expected: Vec<u32> = (0..48).map(|i| i / 16 * 16 + 15 - i % 16).collect();
    assert_eq!(out.copy_to_host_sync(&stream).unwrap(), expected);
}

#[test]
fn kernel_args_go_through_the_overridden_launchers() {
    let stream = simulator();
    let x = DeviceBuffer::to_device_sync(&[1.0f32; 32], &stream).unwrap();
    let mut out = DeviceBuffer::<f32>::zeroed_on(32, &stream).unwrap();
    let args = rt::kernel_args!(kernels::scale[1, 32, stream](2.0f32, &x, &mut out)).unwrap();
    assert_eq!(args.kernel_name(), "scale");
    let input = DeviceBuffer::to_device_sync(&[7u32; 16], &stream).unwrap();
    let mut reversed = DeviceBuffer::<u32>::zeroed_on(16, &stream).unwrap();
    let args = rt::kernel_args!(kernels::nested::reverse_tiles::<16>[1, 16, stream](
        &input,
        &mut reversed
    ))
    .unwrap();
    assert_eq!(args.kernel_name(), "reverse_tiles");
}
