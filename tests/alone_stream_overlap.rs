//! Two streams overlap: while one is held, the other runs to completion.
//!
//! Alone in its binary on purpose: on a GPU, `cuMemFree` anywhere in the
//! process waits for every stream, the held one included, and can hold up
//! other threads' driver calls; here no other test runs, and until it releases
//! the hold this test makes only non-blocking queries.

use gpu_kernels::fill;
use gpu_runtime::{launch, DeviceBuffer, Stream};
use std::time::{Duration, Instant};

#[test]
fn a_held_stream_does_not_hold_back_another() {
    let (held, free) = (Stream::new().unwrap(), Stream::new().unwrap());
    let mut x = DeviceBuffer::<u32>::zeroed_on(4096, &free).unwrap();
    launch!(fill[16, 256, free](1u32, &mut x)).unwrap(); // loads the module first
    free.synchronize().unwrap();

    let (release, gate) = std::sync::mpsc::channel::<()>();
    held.add_callback(move || {
        let _ = gate.recv_timeout(Duration::from_secs(10));
    })
    .unwrap();
    launch!(fill[16, 256, free](9u32, &mut x)).unwrap();
    let done = free.record().unwrap();
    let start = Instant::now();
    while !done.is_done().unwrap() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (free_finished, still_held) = (done.is_done().unwrap(), !held.is_done().unwrap());
    release.send(()).unwrap();
    held.synchronize().unwrap();
    assert!(free_finished, "the free stream finished its work");
    assert!(still_held, "while the other stream was still held");
    assert_eq!(x.copy_to_host_sync(&free).unwrap(), vec![9; 4096]);
}
