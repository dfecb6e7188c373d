//! Numba's `test_laplace`: Jacobi relaxation of Laplace's equation on a
//! 2-D grid, iterated on one stream until the largest change is below a
//! tolerance, checked against the same iteration on the CPU (the same
//! operations in the same order: equal to the bit).
//!
//! | Numba | here |
//! |---|---|
//! | `jocabi_relax_core[griddim, blockdim, stream](dA, dAnew, derror_grid)` | `launch!(jacobi_relax_core[grid, block, stream](&a, a_new.view_2d_mut(..)?, change.view_2d_mut(..)?))` |
//! | the block's maximum in shared memory, `np.abs(error_grid).max()` | each thread's change, `largest::reduce(&change, &stream)?` (`#[vectorize(reduce)]`) |
//! | swap `dA` and `dAnew` | `std::mem::swap(&mut a, &mut a_new)` |
//!
//! The kernels: `gpu_kernels::laplace`.

use gpu_kernels::laplace::{jacobi_relax_core, largest};
use gpu_runtime::{launch, DeviceBuffer, Stream};
use std::error::Error;
use std::process::ExitCode;

/// The grid's side (Numba runs 256 on a GPU, 4 on its simulator).
const N: usize = 32;
const TPB: usize = 16;
const TOLERANCE: f64 = 1.0e-6;
const ITER_MAX: usize = 200;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("numba_laplace: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One Jacobi step on the CPU: the new grid and the largest change.
fn cpu_step(a: &[f64]) -> (Vec<f64>, f64) {
    let mut next = a.to_vec();
    let mut error = 0.0f64;
    for row in 1..N - 1 {
        for col in 1..N - 1 {
            let at = |r: usize, c: usize| a[r * N + c];
            let value = 0.25
                * (((at(row, col + 1) + at(row, col - 1)) + at(row - 1, col)) + at(row + 1, col));
            error = error.max((value - at(row, col)).abs());
            next[row * N + col] = value;
        }
    }
    (next, error)
}

fn run() -> Result<(), Box<dyn Error>> {
    // A[j, 0] = 1.0: the left column held at 1, the rest at 0.
    let mut grid = vec![0.0f64; N * N];
    for row in 0..N {
        grid[row * N] = 1.0;
    }
    let stream = Stream::new()?;
    let mut a = DeviceBuffer::to_device(&grid, &stream)?;
    let mut a_new = DeviceBuffer::to_device(&grid, &stream)?;
    let mut change = DeviceBuffer::<f64>::zeroed_on(N * N, &stream)?;
    let blocks = (N / TPB, N / TPB);

    let (mut error, mut iterations) = (1.0f64, 0);
    let mut cpu = grid.clone();
    while error > TOLERANCE && iterations < ITER_MAX {
        launch!(jacobi_relax_core[blocks, (TPB, TPB), stream](
            &a,
            a_new.view_2d_mut(N, N)?,
            change.view_2d_mut(N, N)?
        ))?;
        error = largest::reduce(&change, &stream)?;
        std::mem::swap(&mut a, &mut a_new);

        let (next, cpu_error) = cpu_step(&cpu);
        cpu = next;
        if error != cpu_error {
            return Err(format!("iteration {iterations}: the device's largest change {error:e} is not the CPU's {cpu_error:e}").into());
        }
        iterations += 1;
    }
    let device = a.copy_to_host_sync(&stream)?;
    if device != cpu {
        let worst = device
            .iter()
            .zip(&cpu)
            .map(|(d, c)| (d - c).abs())
            .fold(0.0, f64::max);
        return Err(format!("after {iterations} iterations the device's grid differs from the CPU's by up to {worst:e}").into());
    }
    println!("laplace: {N}x{N} grid, {iterations} iterations, largest change {error:.3e}");
    println!("laplace: matches the CPU");
    Ok(())
}
