//! Persistent helper threads that run blocks of launches in parallel.

use super::super::settings::settings;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, OnceLock};

/// The number of blocks run at once: `GPU_SIM_THREADS`, else the host's
/// cores (a bad `GPU_SIM_THREADS` fails every launch, naming it).
pub(crate) fn parallelism() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        settings()
            .ok()
            .and_then(|s| s.threads)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

/// Persistent helper threads that run blocks of launches in parallel.
pub(super) struct Pool {
    tasks: Mutex<VecDeque<Box<dyn FnOnce() + Send>>>,
    available: Condvar,
}

pub(super) fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            tasks: Mutex::new(VecDeque::new()),
            available: Condvar::new(),
        }));
        for _ in 0..parallelism().saturating_sub(1) {
            std::thread::Builder::new()
                .name("gpu-sim-blocks".into())
                .spawn(move || loop {
                    let task = {
                        let mut tasks = pool.tasks.lock().unwrap_or_else(|e| e.into_inner());
                        loop {
                            if let Some(task) = tasks.pop_front() {
                                break task;
                            }
                            tasks = pool
                                .available
                                .wait(tasks)
                                .unwrap_or_else(|e| e.into_inner());
                        }
                    };
                    task();
                })
                .expect("the simulator can start its helper threads");
        }
        pool
    })
}

impl Pool {
    pub(super) fn submit(&self, task: Box<dyn FnOnce() + Send>) {
        self.tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(task);
        self.available.notify_one();
    }
}
