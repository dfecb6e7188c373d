//! The load-compute-store pipeline of the Day 7 tutorial: split a pinned host
//! buffer into chunks and, for each chunk, copy it in, run a kernel, and copy
//! the result out, spreading the chunks across streams so that the copies of
//! one chunk overlap the kernels of others.

use super::timeline::{SpanKind, Timeline};
use gpu_runtime::{
    nvtx, CopiesFromDevice, CopiesToDevice, DeviceBuffer, DeviceCopy, DeviceView, DeviceViewMut,
    Done, Error, Mapping, PinnedBuffer, Result, Stream,
};

/// A load-compute-store pipeline over a set of streams. Each stream gets its
/// own pair of device staging buffers of one chunk, allocated on the first
/// [`run`](Pipeline::run) and kept for later ones (grown when a later run has
/// larger chunks), so a pipeline run again and again allocates nothing.
///
/// ```no_run
/// use gpu_runtime::{launch, PinnedBuffer, Pipeline, Stream};
///
/// let streams = [Stream::new()?, Stream::new()?, Stream::new()?, Stream::new()?];
/// let input = PinnedBuffer::from_slice(&vec![1.0f32; 1 << 20])?;
/// let mut output = PinnedBuffer::<f32>::new(1 << 20)?;
/// let mut pipeline = Pipeline::new(&streams)?;
/// pipeline.run(&input, &mut output, 16, None, |stream, x, out| {
///     launch!(gpu_kernels::busy[x.len().div_ceil(256), 256, stream](x, 10, out))
/// })?;
/// // Reading waits for the copies into `output`.
/// assert_eq!(output.as_slice()?.len(), 1 << 20);
/// # Ok::<(), gpu_runtime::Error>(())
/// ```
pub struct Pipeline<T: DeviceCopy, U: DeviceCopy> {
    streams: Vec<Stream>,
    /// Per stream: the chunk copied in and the chunk the kernel writes.
    staging: Vec<Option<(DeviceBuffer<T>, DeviceBuffer<U>)>>,
}

impl<T: DeviceCopy, U: DeviceCopy> Pipeline<T, U> {
    /// A pipeline over `streams` (handles to the same streams; at least one).
    pub fn new(streams: &[Stream]) -> Result<Self> {
        if streams.is_empty() {
            return Err(Error::InvalidArgument {
                operation: "Pipeline::new",
                reason: "a pipeline needs at least one stream (got none)".into(),
            });
        }
        Ok(Pipeline {
            streams: streams.to_vec(),
            staging: streams.iter().map(|_| None).collect(),
        })
    }

    /// The streams, in the order chunks are dealt to them.
    pub fn streams(&self) -> &[Stream] {
        &self.streams
    }

    /// Queues `kernel` over `input` into `output` (the same length) in
    /// `chunks` chunks, chunk `c` on stream `c % streams().len()`, and returns
    /// without waiting: `output` tracks the copies into it, so reading it
    /// (`as_slice`) waits for them, and `input` cannot be written until the
    /// copies from it have completed. With a `timeline`, each copy and kernel
    /// is recorded as a span in the lane of its stream. Each step is queued
    /// inside an NVTX range named as its span (`"copy in: chunk 0"`,
    /// `"kernel: chunk 0"`, `"copy out: chunk 0"`; see
    /// [`nvtx`](gpu_runtime::nvtx)), with or without a timeline.
    ///
    /// The result is the same as one chunk on one stream, provided `kernel`
    /// queues its work on the stream it is given and computes each element of
    /// its output from its input alone.
    pub fn run<MI: Mapping, MO: Mapping>(
        &mut self,
        input: &PinnedBuffer<T, MI>,
        output: &mut PinnedBuffer<U, MO>,
        chunks: usize,
        timeline: Option<&mut Timeline>,
        mut kernel: impl FnMut(&Stream, DeviceView<'_, T>, DeviceViewMut<'_, U>) -> Result<()>,
    ) -> Result<()> {
        let n = input.len();
        if output.len() != n {
            return Err(Error::LengthMismatch {
                operation: "pipeline",
                destination: output.len(),
                source: n,
            });
        }
        if chunks == 0 {
            return Err(Error::InvalidArgument {
                operation: "Pipeline::run",
                reason: "a pipeline needs at least one chunk (got 0)".into(),
            });
        }
        let chunk = n.div_ceil(chunks).max(1);
        for (stream, staging) in self.streams.iter().zip(&mut self.staging) {
            if staging.as_ref().is_none_or(|(x, _)| x.len() < chunk) {
                // Smaller buffers go back to the pool after the work using them.
                *staging = None;
                // Zeroed, as every buffer whose element type may have invalid
                // bit patterns: the kernel closure sees whole views of them.
                *staging = Some((
                    DeviceBuffer::<T>::zeroed_on(chunk, stream)?,
                    DeviceBuffer::<U>::zeroed_on(chunk, stream)?,
                ));
            }
        }
        // The copies are tracked per stream, by one event after the run's
        // last copy on it rather than one per copy (each event in a stream
        // costs the device a little time): a batch of copies out of `input`
        // and one into `output`, tracked when they end, also after an error
        // or a panic.
        input.copies_to_device(|copies_in| {
            output.copies_from_device(|copies_out| {
                self.queue_chunks(n, chunks, copies_in, copies_out, timeline, &mut kernel)
            })
        })
    }

    /// Queues the copies in (into `copies_in`'s batch), kernels and copies
    /// out (into `copies_out`'s) of `chunks` chunks of `n` elements.
    fn queue_chunks<MI: Mapping, MO: Mapping>(
        &mut self,
        n: usize,
        chunks: usize,
        copies_in: &CopiesToDevice<'_, T, MI>,
        copies_out: &CopiesFromDevice<'_, U, MO>,
        mut timeline: Option<&mut Timeline>,
        kernel: &mut impl FnMut(&Stream, DeviceView<'_, T>, DeviceViewMut<'_, U>) -> Result<()>,
    ) -> Result<()> {
        let chunk = n.div_ceil(chunks).max(1);
        let mut started = vec![false; self.streams.len()];
        for c in 0..chunks {
            let start = c * chunk;
            if start >= n {
                break;
            }
            let len = chunk.min(n - start);
            let lane = c % self.streams.len();
            let stream = &self.streams[lane];
            let (dev_in, dev_out) = self.staging[lane]
                .as_mut()
                .expect("allocated by `run` for every stream");
            let mut step = |kind: SpanKind, work: &mut dyn FnMut() -> Result<()>| match timeline
                .as_deref_mut()
            {
                // After this run's first step on a stream, nothing else is
                // queued on it between steps: one event per step suffices.
                Some(t) if std::mem::replace(&mut started[lane], true) => {
                    t.record_next(stream, lane, kind, format!("chunk {c}"), work)
                }
                Some(t) => t.record(stream, lane, kind, format!("chunk {c}"), work),
                // Named as the timeline names the span.
                None => {
                    let _range = nvtx::range_with(|| format!("{}: chunk {c}", kind.label()));
                    work()
                }
            };
            step(SpanKind::CopyIn, &mut || {
                let view = dev_in.slice_mut(0..len).expect("len <= chunk");
                copies_in.copy(start, view, stream)
            })?;
            step(SpanKind::Kernel, &mut || {
                kernel(
                    stream,
                    dev_in.slice(0..len).expect("len <= chunk"),
                    dev_out.slice_mut(0..len).expect("len <= chunk"),
                )
            })?;
            step(SpanKind::CopyOut, &mut || {
                let view = dev_out.slice(0..len).expect("len <= chunk");
                copies_out.copy(view, start, stream)
            })?;
        }
        Ok(())
    }

    /// A future that completes when everything queued on the pipeline's
    /// streams so far has finished: a service queues the next batch with
    /// [`run`](Pipeline::run) (into another output) and awaits this one's.
    ///
    /// ```no_run
    /// # async fn f() -> gpu_runtime::Result<()> {
    /// use gpu_runtime::{launch, PinnedBuffer, Pipeline, Stream};
    /// let streams = [Stream::new()?, Stream::new()?];
    /// let mut pipeline = Pipeline::new(&streams)?;
    /// let inputs = [PinnedBuffer::from_slice(&[1.0f32; 4096])?, PinnedBuffer::from_slice(&[2.0f32; 4096])?];
    /// let mut outputs = [PinnedBuffer::<f32>::new(4096)?, PinnedBuffer::<f32>::new(4096)?];
    /// let [out0, out1] = &mut outputs;
    /// let kernel = |s: &Stream, x: gpu_runtime::DeviceView<'_, f32>, out: gpu_runtime::DeviceViewMut<'_, f32>| {
    ///     launch!(gpu_kernels::busy[x.len().div_ceil(256), 256, s](x, 10, out))
    /// };
    /// pipeline.run(&inputs[0], out0, 4, None, kernel)?;
    /// let first = pipeline.async_done()?;
    /// pipeline.run(&inputs[1], out1, 4, None, kernel)?; // queued while the first runs
    /// first.await?;                                     // the first batch is done
    /// assert_eq!(out0.as_slice()?.len(), 4096);
    /// # Ok(()) }
    /// ```
    pub fn async_done(&self) -> Result<Done> {
        let parts = self
            .streams
            .iter()
            .map(Stream::async_done)
            .collect::<Result<Vec<_>>>()?;
        Ok(Done::all(parts))
    }

    /// [`run`](Pipeline::run), then awaits its completion: the async form of
    /// [`pipeline`]. The host thread is free while the batch runs.
    pub async fn run_async<MI: Mapping, MO: Mapping>(
        &mut self,
        input: &PinnedBuffer<T, MI>,
        output: &mut PinnedBuffer<U, MO>,
        chunks: usize,
        kernel: impl FnMut(&Stream, DeviceView<'_, T>, DeviceViewMut<'_, U>) -> Result<()>,
    ) -> Result<()> {
        self.run(input, output, chunks, None, kernel)?;
        self.async_done()?.await
    }

    /// Waits for everything queued on the pipeline's streams.
    pub fn synchronize(&self) -> Result<()> {
        for stream in &self.streams {
            stream.synchronize()?;
        }
        Ok(())
    }
}

impl<T: DeviceCopy, U: DeviceCopy> std::fmt::Debug for Pipeline<T, U> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let chunk = self.staging.iter().flatten().map(|(x, _)| x.len()).max();
        f.debug_struct("Pipeline")
            .field("streams", &self.streams.len())
            .field("staging_chunk", &chunk)
            .finish()
    }
}

/// Runs `kernel` over `input` into `output` (the same length) in `chunks`
/// chunks, chunk `c` on `streams[c % streams.len()]`, and returns when all of
/// it has finished: a [`Pipeline`] made, run once and waited for. Code that
/// runs the same pipeline repeatedly should keep a [`Pipeline`], which
/// allocates its staging buffers once.
pub fn pipeline<T, U, MI, MO>(
    input: &PinnedBuffer<T, MI>,
    output: &mut PinnedBuffer<U, MO>,
    chunks: usize,
    streams: &[Stream],
    timeline: Option<&mut Timeline>,
    kernel: impl FnMut(&Stream, DeviceView<'_, T>, DeviceViewMut<'_, U>) -> Result<()>,
) -> Result<()>
where
    T: DeviceCopy,
    U: DeviceCopy,
    MI: Mapping,
    MO: Mapping,
{
    let mut pipeline = Pipeline::new(streams)?;
    pipeline.run(input, output, chunks, timeline, kernel)?;
    pipeline.synchronize()
}
