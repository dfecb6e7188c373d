//! What the tracking of device buffers across streams and stream-ordered
//! allocation cost, side by side in one run:
//!
//! - a hand-off between streams (a kernel on `s1` writes a buffer, a kernel on
//!   `s2` reads it, and the next write on `s1` waits for that read): ordered
//!   by the tracking here, by hand-written events with bare `cust` and in CUDA C;
//! - allocating and freeing 1 MiB and 64 MiB: this crate (stream-ordered, from
//!   the device's pool) against CuPy's pool (`cp.empty`, `del`), Numba's
//!   `device_array`, and CUDA C's `cudaMallocAsync`/`cudaFreeAsync` and
//!   `cudaMalloc`/`cudaFree`;
//! - the Day 7 pipeline whose kernel step allocates and drops a temporary
//!   device buffer per chunk, against the same pipeline with a scratch buffer
//!   per stream allocated once.
//!
//! The launch cost of `launch!` with tracking is in `launch_and_bandwidth`.
//! On the GPU machine: `memory_and_tracking --helpers DIR`, `DIR` holding
//! `memory_cuda` (`benches/cuda/memory.cu`) and `memory.py`.

#[path = "common/mod.rs"]
mod common;

use common::{helpers_dir, median, ratio, run_helper, show, Res, Results, BARE_CUST_NOT_BUILT};
use gpu_kernels::{add_kernel, busy, busy_rounds_lasting, fill};
use gpu_runtime::{
    launch, Device, DeviceBuffer, Event, EventOptions, PinnedBuffer, Pipeline, Stream,
};
use std::process::Command;
use std::time::Instant;

const HANDOFFS: usize = 20_000;
const PAIRS: usize = 5_000;
const N: usize = 64 << 20;
const CHUNKS: usize = 16;
const STREAMS: usize = 4;

/// Median of 5 rounds of `rounds` calls of `step` and a final `sync`, in µs per call.
fn per_call_us(
    rounds: usize,
    mut step: impl FnMut() -> Res<()>,
    sync: impl Fn() -> Res<()>,
) -> Res<f64> {
    for _ in 0..rounds / 10 {
        step()?;
    }
    sync()?;
    let mut times = Vec::new();
    for _ in 0..5 {
        times.push(round_us(rounds, &mut step, &sync)?);
    }
    Ok(median(times))
}

/// One round: `rounds` calls of `step`, then `sync`; µs per call.
fn round_us(
    rounds: usize,
    step: &mut dyn FnMut() -> Res<()>,
    sync: &dyn Fn() -> Res<()>,
) -> Res<f64> {
    let start = Instant::now();
    for _ in 0..rounds {
        step()?;
    }
    sync()?;
    Ok(start.elapsed().as_secs_f64() * 1e6 / rounds as f64)
}

/// A way of running one step of the hand-off: the step and its final wait.
type Steps<'a> = (
    Box<dyn FnMut() -> Res<()> + 'a>,
    Box<dyn Fn() -> Res<()> + 'a>,
);

/// The hand-off with bare cust: two streams and two hand-written events, in
/// the same (primary) context as this crate's, current on the thread.
#[cfg(feature = "bare-cust")]
mod bare_cust {
    use crate::common::Res;
    use cust::prelude::{Function, Module};
    use cust::stream::{Stream as CustStream, StreamFlags};
    use cust::sys::{cuEventCreate, cuEventRecord, cuStreamWaitEvent, CUevent, CUresult};
    use gpu_kernels::KERNEL_MODULE;
    use std::ffi::c_void;

    /// What the bare hand-off needs, made once.
    pub struct Handoff {
        // Declared before `module`: the functions are dropped first.
        fill: Function<'static>,
        add: Function<'static>,
        c1: CustStream,
        c2: CustStream,
        x: cust::memory::DeviceBuffer<f32>,
        ones: cust::memory::DeviceBuffer<f32>,
        y: cust::memory::DeviceBuffer<f32>,
        written: CUevent,
        read: CUevent,
        _module: &'static Module,
    }

    fn check(r: CUresult) -> Res<()> {
        match r {
            CUresult::CUDA_SUCCESS => Ok(()),
            other => Err(format!("{other:?}").into()),
        }
    }

    impl Handoff {
        pub fn new() -> Res<Handoff> {
            // Leaked: the benchmark's process ends soon after.
            let module: &'static Module =
                Box::leak(Box::new(Module::from_ptx(KERNEL_MODULE.ptx(), &[])?));
            let (mut written, mut read) = (std::ptr::null_mut(), std::ptr::null_mut());
            // SAFETY: each call writes one event handle; 2 = CU_EVENT_DISABLE_TIMING.
            unsafe {
                check(cuEventCreate(&mut written, 2))?;
                check(cuEventCreate(&mut read, 2))?;
            }
            Ok(Handoff {
                fill: module.get_function("fill_f32__1d")?,
                add: module.get_function("add_kernel__1d")?,
                c1: CustStream::new(StreamFlags::NON_BLOCKING, None)?,
                c2: CustStream::new(StreamFlags::NON_BLOCKING, None)?,
                x: cust::memory::DeviceBuffer::from_slice(&[0.0f32; 256])?,
                ones: cust::memory::DeviceBuffer::from_slice(&[1.0f32; 256])?,
                y: cust::memory::DeviceBuffer::from_slice(&[0.0f32; 256])?,
                written,
                read,
                _module: module,
            })
        }

        /// One hand-off: fill `x` on `c1`, then `y = x + 1` on `c2`, each
        /// ordered after the other's last use by an event.
        pub fn step(&self) -> Res<()> {
            let (px, po, py, n) = (
                self.x.as_device_ptr().as_raw(),
                self.ones.as_device_ptr().as_raw(),
                self.y.as_device_ptr().as_raw(),
                256usize,
            );
            let arg = |p: &u64| p as *const u64 as *mut c_void;
            let value = 1.0f32;
            let fill_args = [
                &value as *const f32 as *mut c_void,
                arg(&px),
                &n as *const usize as *mut c_void,
            ];
            let add_args = [
                arg(&px),
                &n as *const usize as *mut c_void,
                arg(&po),
                &n as *const usize as *mut c_void,
                arg(&py),
                &n as *const usize as *mut c_void,
            ];
            // SAFETY: the argument arrays match the entry points' PTX
            // parameters (a scalar, or pointer and length per slice); the
            // buffers and events outlive the launches and waits.
            unsafe {
                self.c1.launch(&self.fill, 1, 256, 0, &fill_args)?;
                check(cuEventRecord(self.written, self.c1.as_inner()))?;
                check(cuStreamWaitEvent(self.c2.as_inner(), self.written, 0))?;
                self.c2.launch(&self.add, 1, 256, 0, &add_args)?;
                check(cuEventRecord(self.read, self.c2.as_inner()))?;
                check(cuStreamWaitEvent(self.c1.as_inner(), self.read, 0))?;
            }
            Ok(())
        }

        /// Waits for the last hand-off.
        pub fn sync(&self) -> Res<()> {
            Ok(self.c2.synchronize()?)
        }
    }
}

/// The hand-offs (tracked, both kernels on one stream, and bare cust with
/// events where this benchmark was built with the `bare-cust` feature),
/// measured in alternating rounds: medians of each, in µs per step, and the
/// median of the rounds' ratios tracked / bare cust.
fn handoffs_us() -> Res<(f64, f64, Option<f64>, Option<f64>)> {
    // This crate's: tracked across two streams, and on one stream.
    let (s1, s2, one) = (Stream::new()?, Stream::new()?, Stream::new()?);
    let mut x = DeviceBuffer::<f32>::zeroed_on(256, &s1)?;
    let ones = DeviceBuffer::to_device_sync(&[1.0f32; 256], &s2)?;
    let mut y = DeviceBuffer::<f32>::zeroed_on(256, &s2)?;
    let mut x1 = DeviceBuffer::<f32>::zeroed_on(256, &one)?;
    let ones1 = DeviceBuffer::to_device_sync(&[1.0f32; 256], &one)?;
    let mut y1 = DeviceBuffer::<f32>::zeroed_on(256, &one)?;
    let mut value = 0.0f32;
    #[cfg(feature = "bare-cust")]
    let bare = bare_cust::Handoff::new()?;

    #[allow(unused_mut)]
    let mut ways: Vec<Steps<'_>> = vec![
        (
            Box::new(|| {
                value += 1.0;
                launch!(fill[1, 256, s1](value, &mut x))?;
                launch!(add_kernel[1, 256, s2](&x, &ones, &mut y))?;
                Ok(())
            }),
            Box::new(|| Ok(s2.synchronize()?)),
        ),
        (
            Box::new(|| {
                launch!(fill[1, 256, one](1.0f32, &mut x1))?;
                launch!(add_kernel[1, 256, one](&x1, &ones1, &mut y1))?;
                Ok(())
            }),
            Box::new(|| Ok(one.synchronize()?)),
        ),
    ];
    #[cfg(feature = "bare-cust")]
    ways.push((Box::new(|| bare.step()), Box::new(|| bare.sync())));
    for (step, sync) in ways.iter_mut() {
        for _ in 0..HANDOFFS / 10 {
            step()?;
        }
        sync()?;
    }
    let mut times = vec![Vec::new(); ways.len()];
    let mut ratios = Vec::new();
    for _ in 0..7 {
        for (k, (step, sync)) in ways.iter_mut().enumerate() {
            times[k].push(round_us(HANDOFFS, step.as_mut(), sync.as_ref())?);
        }
        if let Some(bare) = times.get(2).and_then(|t| t.last()) {
            ratios.push(times[0].last().expect("pushed") / bare);
        }
    }
    drop(ways);
    if y.copy_to_host_sync(&s2)? != vec![value + 1.0; 256] {
        return Err("the tracked hand-off computed a wrong result".into());
    }
    let mut medians = times.into_iter().map(median);
    Ok((
        medians.next().expect("tracked"),
        medians.next().expect("one stream"),
        medians.next(),
        (!ratios.is_empty()).then(|| median(ratios)),
    ))
}

/// Allocating and dropping a buffer of `bytes`, in µs per pair.
fn alloc_free_us(bytes: usize, zeroed: bool) -> Res<f64> {
    let s = Stream::new()?;
    per_call_us(
        PAIRS,
        || {
            let buffer = if zeroed {
                DeviceBuffer::<u8>::zeroed_on(bytes, &s)?
            } else {
                DeviceBuffer::<u8>::empty_on(bytes, &s)?
            };
            drop(buffer);
            Ok(())
        },
        || Ok(s.synchronize()?),
    )
}

/// The Day 7 pipeline whose kernel step writes a scratch buffer, then copies
/// it into the chunk's output: with one scratch per stream allocated
/// beforehand, and with a temporary scratch allocated and dropped per chunk,
/// the two run alternately. Returns the medians (ms) of each over 9 runs
/// after a warm-up, and the median of the runs' ratios (temporaries over
/// preallocated).
fn pipelines_ms(rounds: u32) -> Res<(f64, f64, f64)> {
    let streams: Vec<Stream> = (0..STREAMS)
        .map(|_| Stream::new())
        .collect::<Result<_, _>>()?;
    let input = PinnedBuffer::from_slice(
        &(0..N)
            .map(|i| (i % 1000) as f32 / 1000.0)
            .collect::<Vec<_>>(),
    )?;
    let mut output = PinnedBuffer::<f32>::new(N)?;
    let chunk = N.div_ceil(CHUNKS);
    let mut scratch: Vec<DeviceBuffer<f32>> = streams
        .iter()
        .map(|s| DeviceBuffer::<f32>::zeroed_on(chunk, s))
        .collect::<Result<_, _>>()?;
    let mut pipeline = Pipeline::new(&streams)?;
    let mut run = |temporaries: bool, output: &mut PinnedBuffer<f32>| -> Res<f64> {
        let start = streams[0].record()?;
        for s in &streams[1..] {
            s.wait_event(&start)?;
        }
        let mut lane = 0;
        pipeline.run(&input, output, CHUNKS, None, |s, x, mut out| {
            let blocks = x.len().div_ceil(256);
            if temporaries {
                let mut tmp = DeviceBuffer::<f32>::empty_on(x.len(), s)?;
                launch!(busy[blocks, 256, s](x, rounds, &mut tmp))?;
                out.copy_from_device(&tmp, s)
            } else {
                let tmp = &mut scratch[lane % STREAMS];
                lane += 1;
                let mut tmp = tmp.slice_mut(0..x.len()).expect("chunk-sized");
                launch!(busy[blocks, 256, s](x, rounds, tmp.reborrow()))?;
                out.copy_from_device(tmp, s)
            }
        })?;
        for s in &streams[1..] {
            let joined = Event::with_options(EventOptions::new().timing(false))?;
            joined.record_on(s)?;
            streams[0].wait_event(&joined)?;
        }
        let end = streams[0].record()?;
        Ok(Event::elapsed_ms(&start, &end)? as f64)
    };
    run(false, &mut output)?;
    run(true, &mut output)?;
    let (mut pre, mut tmp, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..9 {
        let p = run(false, &mut output)?;
        let t = run(true, &mut output)?;
        pre.push(p);
        tmp.push(t);
        ratios.push(t / p);
    }
    let expected: Vec<f32> = {
        let x = DeviceBuffer::to_device_sync(&input.as_slice()?[..1024], &streams[0])?;
        let mut y = DeviceBuffer::<f32>::zeroed_on(1024, &streams[0])?;
        launch!(busy[4, 256, streams[0]](&x, rounds, &mut y))?;
        y.copy_to_host_sync(&streams[0])?
    };
    if output.as_slice()?[..1024] != expected[..] {
        return Err("the pipeline computed a wrong result".into());
    }
    Ok((median(pre), median(tmp), median(ratios)))
}

fn main() -> Res<()> {
    let helpers = helpers_dir()?;
    let device = Device::get(0)?;
    let mut results = Results::new();
    let mut notes = Vec::new();

    let (tracked, one_stream, bare, paired) = handoffs_us()?;
    results.insert("rust_handoff_us".into(), tracked);
    match bare {
        Some(us) => {
            results.insert("cust_handoff_us".into(), us);
        }
        None => notes.push(BARE_CUST_NOT_BUILT.into()),
    }
    results.insert("rust_one_stream_us".into(), one_stream);
    for (bytes, name) in [(1usize << 20, "1mib"), (64 << 20, "64mib")] {
        results.insert(
            format!("rust_empty_{name}_us"),
            alloc_free_us(bytes, false)?,
        );
        results.insert(
            format!("rust_zeroed_{name}_us"),
            alloc_free_us(bytes, true)?,
        );
    }

    // A kernel about as long as one chunk's copy in: 256 MiB at ~55 GB/s over 16 chunks.
    let stream = Stream::new()?;
    let x = DeviceBuffer::<f32>::zeroed_on(N / CHUNKS, &stream)?;
    let mut y = DeviceBuffer::<f32>::zeroed_on(N / CHUNKS, &stream)?;
    let rounds = busy_rounds_lasting(0.3, &x, &mut y, &stream)?;
    let (pre, tmp, pipeline_ratio) = pipelines_ms(rounds)?;
    results.insert("rust_pipeline_preallocated_ms".into(), pre);
    results.insert("rust_pipeline_temporaries_ms".into(), tmp);

    if let Some(dir) = &helpers {
        let cuda = dir.join("memory_cuda");
        if cuda.exists() {
            run_helper(&mut results, &mut notes, "CUDA C", &mut Command::new(cuda));
        } else {
            notes.push(format!("{} is missing: no CUDA C column", cuda.display()));
        }
        run_helper(
            &mut results,
            &mut notes,
            "CuPy/Numba",
            Command::new("python3").arg(dir.join("memory.py")),
        );
    } else {
        notes.push("no --helpers DIR: CUDA C, CuPy and Numba not run".into());
    }

    let get = |k: &str| results.get(k).copied();
    println!(
        "\n{} ({:?})",
        device.name(),
        device.limits().compute_capability
    );
    println!("\nCross-stream hand-off, two tiny kernels per step (us per step, median of 7 rounds of {HANDOFFS}, the three ways alternating)");
    println!("| ordered by | us | vs bare cust |");
    println!("|---|---|---|");
    for (label, key) in [
        (
            "this crate's tracking (no event written)",
            "rust_handoff_us",
        ),
        ("bare cust, two hand-written events", "cust_handoff_us"),
        ("CUDA C, two hand-written events", "cuda_handoff_us"),
        (
            "this crate, both kernels on one stream (no hand-off)",
            "rust_one_stream_us",
        ),
    ] {
        println!(
            "| {label} | {} | {} |",
            show(get(key), 3, "us"),
            ratio(get(key), get("cust_handoff_us"))
        );
    }
    if let Some(paired) = paired {
        println!("tracked / bare cust, median of the paired rounds: {paired:.3}");
    }
    println!("\nAllocate and free (us per pair, median of 5 x {PAIRS})");
    println!("| size | this crate `empty` | this crate zeroed | CuPy pool | Numba | CUDA C MallocAsync | CUDA C Malloc | crate vs CuPy |");
    println!("|---|---|---|---|---|---|---|---|");
    for name in ["1mib", "64mib"] {
        let rust = get(&format!("rust_empty_{name}_us"));
        let cupy = get(&format!("cupy_{name}_us"));
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} |",
            show(rust, 3, "us"),
            show(get(&format!("rust_zeroed_{name}_us")), 3, "us"),
            show(cupy, 3, "us"),
            show(get(&format!("numba_{name}_us")), 3, "us"),
            show(get(&format!("cuda_async_{name}_us")), 3, "us"),
            show(get(&format!("cuda_sync_{name}_us")), 3, "us"),
            ratio(cupy, rust),
        );
    }
    let (pre, tmp) = (
        get("rust_pipeline_preallocated_ms"),
        get("rust_pipeline_temporaries_ms"),
    );
    println!("\nDay 7 pipeline, 256 MiB, {CHUNKS} chunks, {STREAMS} streams, kernel + device copy per chunk (median of 9 runs of each, alternating)");
    println!("| scratch buffer | ms | vs preallocated |");
    println!("|---|---|---|");
    println!(
        "| one per stream, allocated once | {} | 1.00x |",
        show(pre, 3, "ms")
    );
    println!(
        "| allocated and dropped per chunk | {} | {} |",
        show(tmp, 3, "ms"),
        ratio(tmp, pre)
    );
    println!(
        "temporaries / preallocated, median of the paired runs: {pipeline_ratio:.3} (goal <= 1.03)"
    );
    for note in &notes {
        println!("note: {note}");
    }
    Ok(())
}
