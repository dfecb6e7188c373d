//! The rows of the patterns benchmark: the Rust kernels' own, timed and
//! checked here, and those of the CUDA C twins (`patterns_cuda`, built from
//! `benches/cuda/patterns.cu`) and of torch (`patterns_torch.py`), read
//! from their `RESULT <kernel> | <size> | <ms> ms | <rate> <unit>` lines;
//! and the tables that put each Rust kernel beside its twin and its library
//! baselines. Shared by the patterns and GEMM benchmarks, with the run of
//! both helpers ([`run_helpers`]) and the end of a run ([`finish`]).

use crate::common::{Res, Results};
use crate::harness;
use gpu_runtime::{Device, Stream};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a Rust kernel is compared with.
#[derive(Clone, Copy)]
pub struct Baselines {
    /// The table (the twins' own table titles).
    pub family: &'static str,
    /// The CUDA C twin's kernel name (its `RESULT` lines').
    pub twin: &'static str,
    /// The twin's kernel symbol for its register count (`RESULT regs`).
    pub twin_symbol: &'static str,
    /// The library baselines' kernel names, in the order shown, and the
    /// speed the issue asks of the Rust kernel against each (0: none).
    pub libraries: &'static [(&'static str, f64)],
}

/// One Rust kernel's result at one size.
pub struct Row {
    pub kernel: &'static str,
    /// The Rust kernel's PTX entry point, for its register count.
    pub entry: &'static str,
    pub size: String,
    pub baselines: Baselines,
    /// Median per-launch ms (`None` when not timed).
    pub ms: Option<f64>,
    pub max_error: f64,
    pub ok: bool,
}

/// Runs one case: poison the output, launch, check, then (unless quick)
/// time and check again; records the row.
pub struct Ctx<'a> {
    pub stream: &'a Stream,
    pub quick: bool,
    pub on_gpu: bool,
    pub rows: Vec<Row>,
}

impl Ctx<'_> {
    /// Runs `launch` on `state` as the twins' `run_case` does: `poison`,
    /// launch, `check("before timing")`; then the median of
    /// [`harness::TIMED`] launches and `check("after timing")`. `check`
    /// returns whether every checked value is right and the largest error.
    #[allow(clippy::too_many_arguments)]
    pub fn run<S>(
        &mut self,
        kernel: &'static str,
        entry: &'static str,
        size: String,
        baselines: Baselines,
        state: &mut S,
        mut poison: impl FnMut(&mut S) -> gpu_runtime::Result<()>,
        mut launch: impl FnMut(&mut S) -> gpu_runtime::Result<()>,
        mut check: impl FnMut(&mut S, &str) -> Res<(bool, f64)>,
    ) -> Res<()> {
        println!("{kernel} {size}");
        poison(state)?;
        launch(state)?;
        self.stream.synchronize()?;
        let (mut ok, mut max_error) = check(state, "before timing")?;
        let mut ms = None;
        if !self.quick && ok {
            ms = Some(harness::median_launch_ms(
                self.stream,
                state,
                |_| Ok(()),
                &mut launch,
            )?);
            let (after, error) = check(state, "after timing")?;
            ok &= after;
            max_error = max_error.max(error);
        }
        if !ok {
            println!("FAILED {kernel} {size}");
        }
        self.rows.push(Row {
            kernel,
            entry,
            size,
            baselines,
            ms,
            max_error,
            ok,
        });
        Ok(())
    }
}

/// A helper's results: per `(kernel, size)`, the median ms; and its
/// `RESULT regs <name> <n> registers` counts.
#[derive(Default)]
pub struct Helper {
    pub ms: BTreeMap<(String, String), f64>,
    pub registers: Results,
}

/// Runs `command` (at most `limit`), reads its `RESULT` lines into `into`,
/// and adds a note for its `FAILED` lines, a failure or a timeout.
pub fn run_helper(
    what: &str,
    mut command: Command,
    limit: Duration,
    into: &mut Helper,
    notes: &mut Vec<String>,
) {
    let mut child = match command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return notes.push(format!("{what} could not run: {e}")),
    };
    // Read the output on threads, so that a full pipe never stalls the child.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => {
                notes.push(format!("{what}: {e}"));
                break None;
            }
        }
    };
    let (stdout, stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("RESULT regs ") {
            // "<name> <n> registers, <b> bytes local": the name may hold spaces.
            let head = rest.find(" registers").map(|at| &rest[..at]);
            if let Some((name, n)) = head.and_then(|h| h.rsplit_once(' ')) {
                if let Ok(n) = n.parse() {
                    into.registers.insert(name.to_string(), n);
                }
            }
        } else if let Some(rest) = line.strip_prefix("RESULT ") {
            let parts: Vec<&str> = rest.split(" | ").collect();
            if let [kernel, size, ms, ..] = parts[..] {
                if let Some(Ok(ms)) = ms.strip_suffix(" ms").map(str::parse) {
                    into.ms.insert((kernel.to_string(), size.to_string()), ms);
                }
            }
        } else if line.starts_with("FAILED") || line.starts_with("HANG") {
            notes.push(format!("{what}: {line}"));
        }
    }
    match status {
        Some(s) if s.success() => {}
        Some(s) => notes.push(format!("{what} exited with {s}: {}", last_lines(&stderr))),
        None => notes.push(format!(
            "{what}: stopped after {} s (its rows that finished are shown)",
            limit.as_secs()
        )),
    }
}

/// Runs a benchmark's two helpers from `dir` (on the GPU only): the CUDA C
/// twins' program `twin_program` and the torch script `torch_script` (run
/// from `dir`, which holds the `twins_common.py` it imports), each with
/// `--quick` when `quick`, at most `limit` each. What did not run is a
/// note. Gives the twin's results, then torch's.
pub fn run_helpers(
    dir: Option<&Path>,
    on_gpu: bool,
    quick: bool,
    (twin_program, torch_script): (&str, &str),
    limit: Duration,
    notes: &mut Vec<String>,
) -> (Helper, Helper) {
    let (mut twin, mut torch) = (Helper::default(), Helper::default());
    let dir = match (dir, on_gpu) {
        (Some(dir), true) => dir,
        (None, true) => {
            notes.push("CUDA C and torch: not run (no --helpers DIR)".into());
            return (twin, torch);
        }
        (_, false) => {
            notes.push("CUDA C and torch: not run (the CPU simulator)".into());
            return (twin, torch);
        }
    };
    let bin = dir.join(twin_program);
    if bin.is_file() {
        let mut command = Command::new(bin);
        if quick {
            command.arg("--quick");
        }
        let what = format!("CUDA C ({twin_program})");
        run_helper(&what, command, limit, &mut twin, notes);
    } else {
        notes.push(format!("CUDA C: not run (no {})", bin.display()));
    }
    let script = dir.join(torch_script);
    if script.is_file() {
        let mut command = Command::new("python3");
        command.arg(torch_script).current_dir(dir);
        if quick {
            command.arg("--quick");
        }
        let what = format!("torch ({torch_script})");
        run_helper(&what, command, limit, &mut torch, notes);
    } else {
        notes.push(format!("torch: not run (no {})", script.display()));
    }
    (twin, torch)
}

/// The end of a benchmark run: the GPU's line, the tables (`tables`), the
/// notes; an error when `failures` checks of the Rust side failed, or a
/// helper did.
pub fn finish(
    device: &Device,
    quick: bool,
    notes: &[String],
    failures: usize,
    tables: impl FnOnce(),
) -> Res<()> {
    println!();
    println!(
        "GPU: {} (compute capability {}.{}); per-launch time, median of {} launches after {} warm-ups{}",
        device.name(),
        device.limits().compute_capability.0,
        device.limits().compute_capability.1,
        harness::TIMED,
        harness::WARMUP,
        if quick { " (--quick: checks only, no timing)" } else { "" },
    );
    tables();
    for note in notes {
        println!("note: {note}");
    }
    let helper_failed = notes
        .iter()
        .any(|n| n.contains("FAILED") || n.contains("exited with") || n.contains("HANG"));
    if failures > 0 {
        return Err(format!("{failures} check(s) of the Rust side failed").into());
    }
    if helper_failed {
        return Err("a helper failed (see the notes)".into());
    }
    Ok(())
}

fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}

/// `a / b` as a speed ratio with its goal, or `-`.
fn versus(theirs: Option<f64>, ours: Option<f64>, goal: f64) -> String {
    match (theirs, ours) {
        (Some(t), Some(o)) if o > 0.0 => {
            let r = t / o;
            if goal > 0.0 {
                format!("{r:.3} {}", if r >= goal { "(met)" } else { "(missed)" })
            } else {
                format!("{r:.3}")
            }
        }
        _ => "-".into(),
    }
}

/// One markdown table per family, in the order the rows were run: each
/// Rust kernel beside its twin and its library baselines (speed ratios are
/// their time over the Rust kernel's: above 1, the Rust kernel is faster).
pub fn print_tables(rows: &[Row], twin: &Helper, libraries: &[&Helper], rust_registers: &Results) {
    let mut families: Vec<&str> = Vec::new();
    for r in rows {
        if !families.contains(&r.baselines.family) {
            families.push(r.baselines.family);
        }
    }
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
    for family in families {
        println!("\n### {family}\n");
        println!("| kernel | size | Rust ms | CUDA C twin ms | twin/Rust (goal >= 0.97) | baseline | baseline ms | baseline/Rust (goal) | registers Rust / twin | max error | check |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|");
        for r in rows.iter().filter(|r| r.baselines.family == family) {
            let key = |name: &str| (name.to_string(), r.size.clone());
            let twin_ms = twin.ms.get(&key(r.baselines.twin)).copied();
            let regs = format!(
                "{} / {}",
                rust_registers
                    .get(r.entry)
                    .map_or("?".into(), |v| v.to_string()),
                twin.registers
                    .get(r.baselines.twin_symbol)
                    .map_or("?".into(), |v| v.to_string())
            );
            let mut baselines: Vec<(String, Option<f64>, f64)> = r
                .baselines
                .libraries
                .iter()
                .map(|&(name, goal)| {
                    let found = std::iter::once(twin)
                        .chain(libraries.iter().copied())
                        .find_map(|h| h.ms.get(&key(name)).copied());
                    (name.to_string(), found, goal)
                })
                .collect();
            if baselines.is_empty() {
                baselines.push(("-".into(), None, 0.0));
            }
            for (i, (name, base_ms, goal)) in baselines.into_iter().enumerate() {
                let first = i == 0;
                let goal_text = if goal > 0.0 {
                    format!("goal >= {goal}")
                } else {
                    String::new()
                };
                println!(
                    "| {} | {} | {} | {} | {} | {} | {} | {} {} | {} | {} | {} |",
                    if first { r.kernel } else { "" },
                    if first { r.size.as_str() } else { "" },
                    if first { ms(r.ms) } else { String::new() },
                    if first { ms(twin_ms) } else { String::new() },
                    if first {
                        versus(twin_ms, r.ms, 0.97)
                    } else {
                        String::new()
                    },
                    name,
                    ms(base_ms),
                    versus(base_ms, r.ms, goal),
                    if goal > 0.0 {
                        format!("({goal_text})")
                    } else {
                        String::new()
                    },
                    if first { regs.clone() } else { String::new() },
                    if first {
                        format!("{:.3e}", r.max_error)
                    } else {
                        String::new()
                    },
                    if first {
                        if r.ok {
                            "ok"
                        } else {
                            "WRONG"
                        }
                    } else {
                        ""
                    },
                );
            }
        }
    }
}
