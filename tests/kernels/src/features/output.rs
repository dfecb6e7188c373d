//! Formatted output from kernels (`println!`).

use gpu_device::prelude::*;
use gpu_device::{print, println};

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
        t % 2 == 0,
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
