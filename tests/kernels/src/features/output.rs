//! Formatted output from kernels (`println!`).

use gpu_device::prelude::*;
use gpu_device::{gpu_assert, print, println};

/// Each thread below `n` prints one line of every kind of value.
#[kernel]
pub fn print_values(n: u32, x: &[f32], mut out: DisjointSlice<u32>) {
    let i = thread_index();
    let t = i.get() as u32;
    if t >= n {
        return;
    }
    let v = x.get(i.get()).copied().unwrap_or(0.0);
    let negative = -(t as i32) - 1;
    println!(
        "thread {t}: {:.2} {} {:e} | {} {:x} {:#06X} {:o} {:+} {:>4}|{:<4}| {} {:?} {:?} {} 100%",
        v,
        f64::from(v) * 0.5,
        v,
        negative,
        negative,
        t * 255,
        t + 8,
        t,
        t,
        t,
        t.is_multiple_of(2),
        'ü',
        "quoted",
        u64::MAX - u64::from(t),
    );
    out.set(i, t);
}

/// Each thread prints from one of two branches (even or odd input), the
/// branches diverging inside a warp; then every thread prints a second line
/// without a newline in two parts.
#[kernel]
pub fn print_divergent(x: &[i32], mut out: DisjointSlice<u32>) {
    let i = thread_index();
    let Some(&v) = x.get(i.get()) else {
        return;
    };
    if v % 2 == 0 {
        println!("even {} at {}", v, i.get());
    } else {
        println!("odd {} at {}", v, i.get());
    }
    print!("part one of {}, ", i.get());
    print!("part two\n");
    out.set(i, 1);
}

/// Every thread asserts `x[i] < limit`, with a message naming the value.
#[kernel]
pub fn assert_below(limit: i32, x: &[i32], mut out: DisjointSlice<i32>) {
    let i = thread_index();
    if let Some(&v) = x.get(i.get()) {
        gpu_assert!(v < limit, "x[{}] = {} is not below {}", i.get(), v, limit);
        out.set(i, v);
    }
}

/// Asserts without a message that the thread's lane is not `lane`: one
/// thread of each warp fails.
#[kernel]
pub fn assert_lane_is_not(lane: u32, mut out: DisjointSlice<u32>) {
    let i = thread_index();
    gpu_assert!(gpu_device::warp::lane_id() != lane);
    out.set(i, 1);
}
