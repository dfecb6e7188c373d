//! The ports of CuPy's stream guides, run as child processes in both
//! default-stream modes: their assertions on the current stream hold with
//! the legacy default stream and with the per-thread one
//! (`GPU_PER_THREAD_DEFAULT_STREAM=1`, as `CUPY_CUDA_PER_THREAD_DEFAULT_STREAM`).

use super::run_with;
use gpu_runtime::PER_THREAD_DEFAULT_STREAM_ENV;

#[test]
fn the_streams_tutorial_holds_in_both_default_stream_modes() {
    for mode in ["0", "1"] {
        run_with(
            "cupy_streams",
            &[(PER_THREAD_DEFAULT_STREAM_ENV, mode)],
            &["cupy_streams: every assertion of the tutorial holds"],
        );
    }
}

#[test]
fn the_streams_and_events_guide_holds_in_both_default_stream_modes() {
    for mode in ["0", "1"] {
        run_with(
            "cupy_streams_events",
            &[(PER_THREAD_DEFAULT_STREAM_ENV, mode)],
            &["cupy_streams_events: every assertion of the guide holds"],
        );
    }
}
