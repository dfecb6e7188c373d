//! The streams' waits as the watchdog sees them, and what it does to waits
//! that cannot end.

use super::super::super::MAX_DEVICES;
use super::super::fault;
use super::super::fence::{stall_among, Fence};
use super::calls::{create, destroy, enqueue_wait, synchronize};
use super::lookup::with;
use std::time::Duration;

/// A stream waiting for a point that nothing will ever reach (the simulator
/// queues no such wait: this builds one) and a host thread synchronising
/// with it: the watchdog's report names both waits, and failing them ends
/// the stream's device with that report instead of hanging.
#[test]
fn waits_that_cannot_end_are_named_and_failed() {
    let device = MAX_DEVICES - 3; // no other test uses it
    let stream = create(device, true, 0);
    let name = with(stream, |s| s.name());
    let never = Fence::new("a stream of nowhere".into(), "a point nobody queues");
    enqueue_wait(stream, never).unwrap();
    let host = std::thread::Builder::new()
        .name("synchroniser".into())
        .spawn(move || synchronize(stream))
        .unwrap();
    let involved = |waiter: &str, what: &str| waiter.contains(&*name) || what.contains(&*name);
    let start = std::time::Instant::now();
    let (report, fences) = loop {
        let (report, fences) = stall_among(involved);
        if fences.len() == 2 || start.elapsed() > Duration::from_secs(30) {
            break (report, fences);
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert_eq!(fences.len(), 2, "{report}");
    assert!(
        report.contains(&format!(
            "{name} waits for a stream of nowhere to reach a point nobody queues"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!(
            "host thread `synchroniser` in cuStreamSynchronize waits for {name} to reach the end of its queued work"
        )),
        "{report}"
    );
    assert!(
        report.ends_with("please report it with this message"),
        "{report}"
    );
    for fence in &fences {
        fence.abandon(&report);
    }
    let error = host.join().unwrap().unwrap_err();
    assert_eq!(error.call, "cuStreamSynchronize");
    assert_eq!(error.description, report);
    assert!(fault::is_faulted(device));
    assert!(!fault::is_faulted(device - 1));
    destroy(stream);
}
