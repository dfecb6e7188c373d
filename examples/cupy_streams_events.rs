//! The CuPy guide "Streams and Events" (`cupy-streams-and-events-guide.rst`),
//! statement by statement; each `assert` of the guide is an assertion here,
//! and the measured elapsed time is printed.
//!
//! One ordering is added: the guide reads `b_cp` on a *new* stream right after
//! computing it on the first one, and two CuPy streams are not ordered with
//! each other, so the read could see an unfinished sum. Here the new stream
//! waits for an event recorded at the end of the first stream's work.
//!
//! Run: `cargo run --release --example cupy_streams_events`

use gpu_runtime::{current_stream, get_elapsed_time, DeviceBuffer, Event, Stream};
use std::error::Error;
use std::process::ExitCode;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cupy_streams_events: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    // >>> a_np = np.arange(10)
    let a_np: Vec<i64> = (0..10).collect();
    // >>> s = cp.cuda.Stream()
    let s = Stream::new()?;
    // >>> with s:
    let (a_cp, b_cp, first_stream_done) = {
        let _with_s = s.enter()?;
        let a_cp = DeviceBuffer::from_host_sync(&a_np)?; // H2D transfer on stream s
        let b_cp = gpu_ops::sum(&a_cp)?; // kernel launched on stream s
        assert_eq!(s, current_stream()?); // assert s == cp.cuda.get_current_stream()
        (a_cp, b_cp, s.record()?)
    };
    // fall back to the previous stream in use (here the default stream: the
    // legacy one, or the per-thread one with GPU_PER_THREAD_DEFAULT_STREAM=1)
    // when going out of the scope of s
    assert_eq!(current_stream()?, Stream::thread_default());

    // >>> s = cp.cuda.Stream()
    let s = Stream::new()?;
    s.wait_event(&first_stream_done)?; // (added: see the module documentation)
                                       // >>> s.use()  # any subsequent operations are done on steam s
    s.make_current()?;
    println!("{s}");
    // >>> b_np = cp.asnumpy(b_cp)
    let b_np = b_cp.to_host_sync()?;
    // >>> assert s == cp.cuda.get_current_stream()
    assert_eq!(s, current_stream()?);
    // >>> cp.cuda.Stream.null.use()  # fall back to the default (null) stream
    Stream::null().make_current()?;
    println!("{}", Stream::null());
    // >>> assert cp.cuda.Stream.null == cp.cuda.get_current_stream()
    assert_eq!(Stream::null(), current_stream()?);

    // >>> e1 = cp.cuda.Event()
    let e1 = Event::new()?;
    // >>> e1.record()
    e1.record()?;
    // >>> a_cp = b_cp * a_cp + 8
    let a_cp = (&b_cp * &a_cp + 8).eval()?;
    // >>> e2 = cp.cuda.get_current_stream().record()
    let e2 = current_stream()?.record()?;

    // set up a stream order
    // >>> s2 = cp.cuda.Stream()
    let s2 = Stream::new()?;
    // >>> s2.wait_event(e2)
    s2.wait_event(&e2)?;
    // >>> with s2:
    let a_np = {
        let _with_s2 = s2.enter()?;
        // the a_cp is guaranteed updated when this copy (on s2) starts
        a_cp.to_host_sync()?
    };

    // timing
    // >>> e2.synchronize()
    e2.synchronize()?;
    // >>> t = cp.cuda.get_elapsed_time(e1, e2)  # only include the compute time, not the copy time
    let t = get_elapsed_time(&e1, &e2)?;

    println!("b_np = {b_np}");
    println!("a_np = b_cp * a_cp + 8 = {a_np:?}");
    let expected: Vec<i64> = (0..10).map(|i| b_np * i + 8).collect();
    assert_eq!(b_np, 45);
    assert_eq!(a_np, expected);
    println!("t = {t:.4} ms between e1 and e2 (the computation of b_cp * a_cp + 8)");
    println!("cupy_streams_events: every assertion of the guide holds");
    Ok(())
}
