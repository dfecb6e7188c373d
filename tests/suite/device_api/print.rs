//! Formatted output from kernels: `println!` and `print!` reach the host's
//! standard output when the launch completes, as CUDA's `printf` does, with
//! the same text on the GPU and on the simulator. On the simulator where
//! there is no GPU, on the GPU otherwise. The tests read file descriptor 1,
//! where both arrive (the simulator's through Rust's `stdout`, a GPU's
//! through the driver's C library).

use gpu_runtime::{backend, launch, Backend, DeviceBuffer, Stream};
use gpu_test_kernels::output::{print_divergent, print_values};
use std::io::Read;
use std::sync::Mutex;

/// What `run` wrote to file descriptor 1.
fn stdout_of(run: impl FnOnce()) -> String {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut file = tempfile();
    use std::io::Write;
    std::io::stdout().flush().unwrap();
    // SAFETY: plain descriptor calls on descriptors this function owns (the
    // copy of 1, the temporary file's); 1 is restored before returning.
    let saved = unsafe {
        let saved = libc::dup(1);
        assert!(saved >= 0);
        assert!(libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&file), 1) >= 0);
        saved
    };
    run();
    std::io::stdout().flush().unwrap();
    // SAFETY: flushes the C library's streams (a GPU's printf output goes
    // through them), then restores descriptor 1 and closes the copy.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::dup2(saved, 1);
        libc::close(saved);
    }
    let mut text = String::new();
    use std::io::Seek;
    file.seek(std::io::SeekFrom::Start(0)).unwrap();
    file.read_to_string(&mut text).unwrap();
    text
}

/// An unnamed temporary file.
fn tempfile() -> std::fs::File {
    let path = std::env::temp_dir().join(format!(
        "gpu-print-test-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    file
}

/// The line `print_values` prints for thread `t` and value `v`, as C's
/// printf formats it.
fn expected_values_line(t: u32, v: f32) -> String {
    let negative = -(t as i32) - 1;
    let half = f64::from(v) * 0.5;
    // `%g` of the values used here (short decimals) is Rust's `{}`.
    format!(
        "thread {t}: {v:.2} {half} {:.6}e{:+03} | {negative} {:x} {:#06X} {:o} {:+} {:>4}|{:<4}| {} 'ü' \"quoted\" {} 100%",
        f64::from(v) / 10f64.powi(f64::from(v).abs().log10().floor() as i32),
        f64::from(v).abs().log10().floor() as i32,
        negative as u32,
        t * 255,
        t + 8,
        t,
        t,
        t,
        t.is_multiple_of(2),
        u64::MAX - u64::from(t),
    )
}

#[test]
fn a_kernel_prints_numbers_booleans_characters_and_strings() {
    let stream = Stream::new().unwrap();
    let x: Vec<f32> = (0..40).map(|i| 1.5 + i as f32 * 0.25).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    let printed = stdout_of(|| {
        launch!(print_values[2, 32, stream](40, &dx, &mut out)).unwrap();
        stream.synchronize().unwrap();
    });
    // (The test harness may report another test meanwhile: only the
    // kernel's lines count.)
    let mut lines: Vec<&str> = printed
        .lines()
        .filter(|l| l.starts_with("thread "))
        .collect();
    let mut expected: Vec<String> = (0..40)
        .map(|t| expected_values_line(t, x[t as usize]))
        .collect();
    if backend() == Backend::Simulator {
        // Block after block, each block's threads in order.
        assert_eq!(lines, expected);
    }
    lines.sort();
    expected.sort();
    assert_eq!(lines, expected);
}

#[test]
fn prints_from_divergent_branches_each_come_whole() {
    let stream = Stream::new().unwrap();
    let x: Vec<i32> = (0..48).map(|i| i * 3 - 7).collect();
    let dx = DeviceBuffer::to_device_sync(&x, &stream).unwrap();
    let mut out = DeviceBuffer::<u32>::zeroed_on(64, &stream).unwrap();
    let printed = stdout_of(|| {
        launch!(print_divergent[1, 64, stream](&dx, &mut out)).unwrap();
        stream.synchronize().unwrap();
    });
    // Each `println!` is one printf call, so its line comes whole; the two
    // `print!` calls of a thread are two, between which a GPU may put other
    // threads' output, never inside one.
    for (i, v) in x.iter().enumerate() {
        let parity = if v % 2 == 0 { "even" } else { "odd" };
        for piece in [
            format!("{parity} {v} at {i}\n"),
            format!("part one of {i}, "),
        ] {
            assert_eq!(
                printed.matches(&piece).count(),
                1,
                "{piece:?} in:\n{printed}"
            );
        }
    }
    assert_eq!(printed.matches("part two\n").count(), 48, "{printed}");
    if backend() == Backend::Simulator {
        // Each thread's two `print!` calls make one line here.
        let lines: Vec<&str> = printed
            .lines()
            .filter(|l| ["even ", "odd ", "part "].iter().any(|p| l.starts_with(p)))
            .collect();
        let expected: Vec<String> = x
            .iter()
            .enumerate()
            .map(|(i, v)| format!("{} {v} at {i}", if v % 2 == 0 { "even" } else { "odd" }))
            .chain((0..48).map(|i| format!("part one of {i}, part two")))
            .collect();
        let mut sorted = lines.clone();
        sorted.sort();
        let mut want = expected.clone();
        want.sort();
        assert_eq!(sorted, want);
    }
    assert_eq!(
        out.copy_to_host_sync(&stream).unwrap().iter().sum::<u32>(),
        48
    );
}
