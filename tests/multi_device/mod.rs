//! Tests that need several devices, shared by the binaries that run them:
//! `forced_several_devices` (whatever backend the machine has: two GPUs on the
//! GPU machine), `forced_two_simulated_devices` (the simulator with 2 devices) and
//! `forced_four_simulated_devices` (4 devices). Each binary says how its process
//! gets its devices and calls [`multi_device_tests!`].
//!
//! - [`binding`]: work queued on a stream runs on the stream's device;
//! - [`peer`]: peer copies, ordering across devices, peer access for
//!   launches, events and pipelines across devices;
//! - [`collectives`]: the collectives of one process driving every device;
//! - [`processes`]: one process per rank, meeting through a file or an
//!   environment variable.

#![allow(dead_code)]

mod binding;
mod collectives;
mod peer;
mod processes;

pub use binding::*;
pub use collectives::*;
pub use peer::*;
pub use processes::*;

use gpu_kernels::fill;
use gpu_runtime::{launch, Device, DeviceBuffer, Stream};

pub(crate) fn blocks(n: usize) -> usize {
    n.div_ceil(256)
}

pub(crate) fn devices() -> Vec<Device> {
    let all = Device::all().unwrap();
    assert!(all.len() >= 2, "these tests need at least 2 devices");
    all
}

/// One new stream per device.
pub(crate) fn streams_of(devices: &[Device]) -> Vec<Stream> {
    devices
        .iter()
        .map(|&d| Stream::on_device(d).unwrap())
        .collect()
}

/// A buffer of `n` copies of `value` on `stream`'s device, written by a kernel.
pub(crate) fn filled(n: usize, value: f32, stream: &Stream) -> DeviceBuffer<f32> {
    let mut x = DeviceBuffer::<f32>::zeroed_on(n, stream).unwrap();
    launch!(fill[blocks(n), 256, stream](value, &mut x)).unwrap();
    stream.synchronize().unwrap();
    x
}

/// Rank `r`'s values: `r + 1 + i % 7` for element `i`.
pub(crate) fn rank_values(rank: usize, n: usize) -> Vec<f32> {
    (0..n).map(|i| (rank + 1 + i % 7) as f32).collect()
}

/// Defines the `#[test]`s of this module; `$setup` runs first in each and
/// returns whether the test runs in this process (see `forced_several_devices`).
#[macro_export]
macro_rules! multi_device_tests {
    ($setup:path) => {
        $crate::multi_device_tests!(@each $setup;
            peer_copies_carry_data_around_every_device,
            a_peer_copy_waits_for_the_kernel_writing_its_source,
            a_copy_between_devices_is_queued_not_waited_for,
            a_buffer_written_by_a_peer_copy_is_read_after_it,
            copies_need_a_stream_of_one_of_their_devices,
            events_of_two_devices_have_no_elapsed_time_between_them,
            a_pipeline_spreads_its_chunks_over_every_device,
            launches_use_another_devices_buffer_only_with_peer_access,
            matmul_refuses_another_devices_buffer,
            all_reduce_sums_and_maxes_across_every_device,
            broadcast_reduce_scatter_and_all_gather_move_the_right_blocks,
            an_all_reduce_waits_for_its_inputs_and_is_waited_for,
            collective_arguments_are_checked,
            ranks_in_separate_processes_meet_through_a_file,
            ranks_in_separate_processes_meet_through_an_environment_variable,
            a_pinned_buffer_serves_one_device_then_another,
            pinned_copies_on_another_devices_default_stream_keep_its_order,
            default_streams_of_two_devices_are_two_streams,
            a_default_stream_waits_for_an_event_of_another_device,
            collectives_run_on_each_devices_default_stream
        );

        /// A rank of the multi-process tests, run in a child process by them.
        #[test]
        #[ignore = "run by the multi-process tests in child processes"]
        fn rank_process_of_multi_process_tests() {
            if $setup(stringify!(rank_process_of_multi_process_tests)) {
                multi_device::rank_process();
            }
        }
    };
    (@each $setup:path; $($name:ident),*) => {$(
        #[test]
        fn $name() {
            if $setup(stringify!($name)) {
                multi_device::$name();
            }
        }
    )*};
}
