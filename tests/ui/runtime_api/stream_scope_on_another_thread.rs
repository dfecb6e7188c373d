// Attack (held): the current stream is per thread, and a scope's guard
// removes its entry from its thread's stack when dropped. Dropped on another
// thread, it would pop that thread's scope instead. The guard is not `Send`.
use gpu_runtime::Stream;

fn main() -> gpu_runtime::Result<()> {
    let stream = Stream::new()?;
    let scope = stream.enter()?;
    std::thread::scope(|s| {
        s.spawn(move || drop(scope));
    });
    Ok(())
}
