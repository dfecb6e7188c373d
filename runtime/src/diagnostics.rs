//! The runtime's diagnostics (which backend runs, settings it ignores) as
//! `tracing` events of target `gpu_runtime`, which a program's subscriber
//! routes, filters or silences. Where the program has set no subscriber,
//! they are printed on standard error as `gpu-runtime: ...` lines, so that a
//! program still says on its first line where it runs (README).

use tracing::dispatcher;
use tracing::subscriber::NoSubscriber;

/// How much a diagnostic matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    /// What the program should know (the backend chosen).
    Info,
    /// A setting ignored, or overridden.
    Warn,
}

/// Reports `message`: an event for the program's subscriber, or a line on
/// standard error where there is none.
pub(crate) fn report(level: Level, message: &str) {
    match level {
        Level::Info => tracing::info!(target: "gpu_runtime", "{message}"),
        Level::Warn => tracing::warn!(target: "gpu_runtime", "{message}"),
    }
    if !has_subscriber() {
        eprintln!("gpu-runtime: {message}");
    }
}

/// Whether the program has set a subscriber, global or for this thread (a
/// global `NoSubscriber`, set to silence everything, counts).
fn has_subscriber() -> bool {
    dispatcher::has_been_set() || !dispatcher::get_default(|d| d.is::<NoSubscriber>())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    /// Keeps the events' levels, targets and messages.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<(tracing::Level, String, String)>>>);

    struct Message(String);
    impl Visit for Message {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl Subscriber for Recorder {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let mut message = Message(String::new());
            event.record(&mut message);
            let meta = event.metadata();
            self.0
                .lock()
                .unwrap()
                .push((*meta.level(), meta.target().to_string(), message.0));
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    #[test]
    fn diagnostics_are_events_a_subscriber_receives() {
        assert!(!has_subscriber(), "no subscriber in this test process");
        let recorder = Recorder::default();
        tracing::subscriber::with_default(recorder.clone(), || {
            assert!(has_subscriber());
            report(Level::Info, "running on the CPU simulator (test)");
            report(Level::Warn, "ignoring X=y");
        });
        let events = recorder.0.lock().unwrap().clone();
        assert_eq!(
            events,
            vec![
                (
                    tracing::Level::INFO,
                    "gpu_runtime".to_string(),
                    "running on the CPU simulator (test)".to_string()
                ),
                (
                    tracing::Level::WARN,
                    "gpu_runtime".to_string(),
                    "ignoring X=y".to_string()
                ),
            ]
        );
    }
}
