//! Host implementations of the device primitives: real math; the functions
//! that only mean something inside a running kernel panic, naming themselves.

use super::ShuffleMode;

#[cold]
#[track_caller]
fn outside_kernel(function: &str) -> ! {
    panic!(
        "gpu_device::{function} was called outside a kernel: it only runs inside a #[kernel] function launched on the GPU"
    )
}

pub(crate) fn thread_idx() -> [u32; 3] {
    outside_kernel("thread_idx")
}

pub(crate) fn block_idx() -> [u32; 3] {
    outside_kernel("block_idx")
}

pub(crate) fn block_dim() -> [u32; 3] {
    outside_kernel("block_dim")
}

pub(crate) fn grid_dim() -> [u32; 3] {
    outside_kernel("grid_dim")
}

pub(crate) fn lane_id() -> u32 {
    outside_kernel("warp::lane_id")
}

pub(crate) fn sync_threads() {
    outside_kernel("sync_threads")
}

pub(crate) fn sync_warp(_mask: u32) {
    outside_kernel("sync::sync_warp")
}

pub(crate) fn fence_device() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst)
}

pub(crate) fn fence_block() {
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst)
}

pub(crate) fn ballot(_mask: u32, _predicate: bool) -> u32 {
    outside_kernel("warp::ballot_sync")
}

pub(crate) fn shuffle(_mode: ShuffleMode, _mask: u32, _word: u32, _b: u32) -> u32 {
    outside_kernel("warp shuffles")
}

pub(crate) fn dynamic_shared() -> (*mut u8, usize) {
    outside_kernel("shared::dynamic")
}

pub(crate) mod math {
    pub(crate) fn sqrt_f32(x: f32) -> f32 {
        x.sqrt()
    }
    pub(crate) fn sqrt_f64(x: f64) -> f64 {
        x.sqrt()
    }
    pub(crate) fn floor_f32(x: f32) -> f32 {
        x.floor()
    }
    pub(crate) fn floor_f64(x: f64) -> f64 {
        x.floor()
    }
    pub(crate) fn ceil_f32(x: f32) -> f32 {
        x.ceil()
    }
    pub(crate) fn ceil_f64(x: f64) -> f64 {
        x.ceil()
    }
    pub(crate) fn round_f32(x: f32) -> f32 {
        x.round()
    }
    pub(crate) fn round_f64(x: f64) -> f64 {
        x.round()
    }
    pub(crate) fn trunc_f32(x: f32) -> f32 {
        x.trunc()
    }
    pub(crate) fn trunc_f64(x: f64) -> f64 {
        x.trunc()
    }
    pub(crate) fn abs_f32(x: f32) -> f32 {
        x.abs()
    }
    pub(crate) fn abs_f64(x: f64) -> f64 {
        x.abs()
    }
    pub(crate) fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
    pub(crate) fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    pub(crate) fn min_f32(a: f32, b: f32) -> f32 {
        a.min(b)
    }
    pub(crate) fn min_f64(a: f64, b: f64) -> f64 {
        a.min(b)
    }
    pub(crate) fn max_f32(a: f32, b: f32) -> f32 {
        a.max(b)
    }
    pub(crate) fn max_f64(a: f64, b: f64) -> f64 {
        a.max(b)
    }
    pub(crate) fn copysign_f32(a: f32, b: f32) -> f32 {
        a.copysign(b)
    }
    pub(crate) fn copysign_f64(a: f64, b: f64) -> f64 {
        a.copysign(b)
    }
    pub(crate) fn exp2_approx(x: f32) -> f32 {
        x.exp2()
    }
    pub(crate) fn log2_approx(x: f32) -> f32 {
        x.log2()
    }
    pub(crate) fn sin_approx(x: f32) -> f32 {
        x.sin()
    }
    pub(crate) fn cos_approx(x: f32) -> f32 {
        x.cos()
    }
    pub(crate) fn rsqrt_approx(x: f32) -> f32 {
        1.0 / x.sqrt()
    }
}
