//! The load-compute-store pipeline of the Day 7 tutorial: split a pinned host
//! buffer into chunks and, for each chunk, copy it in, run a kernel, and copy
//! the result out, spreading the chunks across streams so that the copies of
//! one chunk overlap the kernels of others.

use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceView, DeviceViewMut};
use crate::pinned::PinnedBuffer;
use crate::stream::Stream;
use crate::timeline::{SpanKind, Timeline};
use gpu_device::DeviceCopy;

/// Runs `kernel` over `input` into `output` (the same length) in `chunks`
/// chunks, chunk `c` on `streams[c % streams.len()]`, and returns when all of
/// it has finished. Each stream gets its own device buffers of one chunk,
/// allocated once. With a `timeline`, each copy and kernel is recorded as a
/// span in the lane of its stream. The result is the same as one chunk on one
/// stream, provided `kernel` computes each element from its input alone.
pub fn pipeline<T, U>(
    input: &PinnedBuffer<T>,
    output: &mut PinnedBuffer<U>,
    chunks: usize,
    streams: &[Stream],
    mut timeline: Option<&mut Timeline>,
    mut kernel: impl FnMut(&Stream, DeviceView<'_, T>, DeviceViewMut<'_, U>) -> Result<()>,
) -> Result<()>
where
    T: DeviceCopy,
    U: DeviceCopy,
{
    let n = input.len();
    if output.len() != n {
        return Err(Error::LengthMismatch {
            operation: "pipeline",
            destination: output.len(),
            source: n,
        });
    }
    if chunks == 0 || streams.is_empty() {
        return Err(Error::InvalidPipeline {
            reason: format!("a pipeline needs at least one chunk and one stream (got {chunks} chunks, {} streams)", streams.len()),
        });
    }
    let chunk = n.div_ceil(chunks).max(1);
    let mut inputs = Vec::with_capacity(streams.len());
    let mut outputs = Vec::with_capacity(streams.len());
    for stream in streams {
        // SAFETY: every element of a chunk's range is written by its copy in
        // (inputs) or by the kernel (outputs, per the contract above) before
        // anything reads it, all in order on this stream.
        inputs.push(unsafe { DeviceBuffer::<T>::uninitialized(chunk, stream)? });
        outputs.push(DeviceBuffer::<U>::zeroed_on(chunk, stream)?);
    }
    for c in 0..chunks {
        let start = c * chunk;
        if start >= n {
            break;
        }
        let len = chunk.min(n - start);
        let lane = c % streams.len();
        let stream = &streams[lane];
        let (dev_in, dev_out) = (&mut inputs[lane], &mut outputs[lane]);
        let mut step =
            |kind: SpanKind, work: &mut dyn FnMut() -> Result<()>| match timeline.as_deref_mut() {
                Some(t) => t.record(stream, lane, kind, format!("chunk {c}"), work),
                None => work(),
            };
        step(SpanKind::CopyIn, &mut || {
            dev_in
                .slice_mut(0..len)
                .expect("len <= chunk")
                .copy_from_pinned(input, start, stream)
        })?;
        step(SpanKind::Kernel, &mut || {
            kernel(
                stream,
                dev_in.slice(0..len).expect("len <= chunk"),
                dev_out.slice_mut(0..len).expect("len <= chunk"),
            )
        })?;
        step(SpanKind::CopyOut, &mut || {
            dev_out
                .slice(0..len)
                .expect("len <= chunk")
                .copy_to_pinned(output, start, stream)
        })?;
    }
    for stream in streams {
        stream.synchronize()?;
    }
    Ok(())
}
