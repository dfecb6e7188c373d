//! What the benchmark binaries share: argument parsing, medians, the helper
//! processes (CUDA C, CuPy, Numba) and the formatting of table cells.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::error::Error;
use std::path::PathBuf;
use std::process::Command;

/// The benchmarks' result type.
pub type Res<T> = Result<T, Box<dyn Error>>;

/// The note of a benchmark built without the `bare-cust` feature, in place
/// of its bare cust figures.
pub const BARE_CUST_NOT_BUILT: &str = "bare cust: not built (`cargo bench -p gpu-benches --features bare-cust`; cust links libcuda, which scripts/setup.sh provides in .tools/cuda-driver)";

/// Figures by name, from this process and from the helpers.
pub type Results = BTreeMap<String, f64>;

/// `--helpers DIR`: the directory with the helper programs, if given.
/// (`--bench`, which `cargo bench` passes, is accepted and ignored.)
pub fn helpers_dir() -> Res<Option<PathBuf>> {
    Ok(bench_args(&[])?.0)
}

/// `--helpers DIR` (the directory with the helper programs, if given) and
/// which of the switches `flags` (such as `--check`) were given; any other
/// argument is an error naming it. (`--bench`, which `cargo bench` passes,
/// is accepted and ignored.)
pub fn bench_args(flags: &[&str]) -> Res<(Option<PathBuf>, Vec<String>)> {
    let mut args = std::env::args().skip(1);
    let (mut helpers, mut given) = (None, Vec::new());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--helpers" => match args.next() {
                Some(dir) => helpers = Some(PathBuf::from(dir)),
                None => return Err("--helpers needs a directory: --helpers DIR".into()),
            },
            "--bench" => {}
            flag if flags.contains(&flag) => given.push(arg),
            other => {
                let mut usage = String::from("--helpers DIR");
                for flag in flags {
                    usage += &format!(", {flag}");
                }
                return Err(format!("unknown argument `{other}`: use {usage}").into());
            }
        }
    }
    Ok((helpers, given))
}

/// The median of `values` (the upper one of an even count).
pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.total_cmp(b));
    values[values.len() / 2]
}

/// Runs a helper and adds its `RESULT <name> <value> <unit>` lines to
/// `results`; its `FAILED` lines and a failed exit become notes.
pub fn run_helper(
    results: &mut Results,
    notes: &mut Vec<String>,
    what: &str,
    command: &mut Command,
) {
    match command.output() {
        Ok(out) => {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let fields: Vec<&str> = line.split_whitespace().collect();
                if let ["RESULT", name, value, ..] = fields[..] {
                    if let Ok(v) = value.parse() {
                        results.insert(name.to_string(), v);
                    }
                } else if line.starts_with("FAILED") {
                    notes.push(format!("{what}: {line}"));
                }
            }
            if !out.status.success() {
                notes.push(format!(
                    "{what} exited with {}: {}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        Err(e) => notes.push(format!("{what} could not run: {e}")),
    }
}

/// A figure with its unit and `digits` decimals, or `not run`.
pub fn show(value: Option<f64>, digits: usize, unit: &str) -> String {
    value.map_or_else(|| "not run".into(), |v| format!("{v:.digits$} {unit}"))
}

/// `a / b` as `1.23x`, or `-` when either is missing.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{:.2}x", a / b),
        _ => "-".into(),
    }
}

/// The tutorial kernels' PTX (`add_kernel`, `busy`, `fill`), written to a
/// temporary file for the helpers that load it (the Python side of the launch
/// benchmark, the CUDA C pipeline and graphs).
pub fn kernels_ptx_file() -> Res<PathBuf> {
    let path = std::env::temp_dir().join(format!("gpu-kernels-{}.ptx", std::process::id()));
    std::fs::write(&path, gpu_kernels::KERNEL_MODULE.ptx())?;
    Ok(path)
}
