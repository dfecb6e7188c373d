// Attack: on the simulator, device functions read the simulated thread that
// the executor made current. Code in a kernel body makes its own thread with
// chosen coordinates (and block services that hand out any address as
// shared memory) and runs `thread_index()` as that thread: every thread of
// the launch gets index 0. Making a thread current and implementing its
// block are `unsafe`, so this does not compile.
use gpu_device::__private::simulation::{run_as, Access, Block as SimulatedBlock, SimulatedThread};
use gpu_device::__private::ShuffleMode;
use gpu_device::prelude::*;
// What `embed_kernels!()` would define; these kernels never reach the GPU.
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

struct Fake;

impl SimulatedBlock for Fake {
    fn barrier(&self, _: &SimulatedThread, _: u32) {}
    fn vote(&self, _: &SimulatedThread, _: bool) -> u32 {
        0
    }
    fn active_lanes(&self, _: &SimulatedThread) -> u32 {
        1
    }
    fn print(&self, _: &SimulatedThread, _: &[u8]) {}
    fn module_global(&self, _: &'static str, _: usize) -> *mut u8 {
        8 as *mut u8
    }
    fn exchange(&self, _: &SimulatedThread, _: u32, value: u32, _: ShuffleMode, _: u32) -> u32 {
        value
    }
    fn static_shared(&self, _: &'static str, _: usize, _: usize) -> *mut u8 {
        8 as *mut u8
    }
    fn dynamic_shared(&self) -> (*mut u8, usize) {
        (8 as *mut u8, 1 << 20)
    }
    fn after_atomics(&self, _: &SimulatedThread, _: bool) {}
    fn thread_of(&self, _: u64) -> Option<([u32; 3], [u32; 3])> {
        None
    }
    fn record(&self, _: &SimulatedThread, _: Access) {}
}

#[kernel]
pub fn forge(mut out: DisjointSlice<u32>) {
    let fake = SimulatedThread {
        thread_idx: [0; 3],
        block_idx: [0; 3],
        block_dim: [1, 1, 1],
        grid_dim: [1, 1, 1],
        linear: 0,
        serial: 1,
        block: &Fake,
    };
    let i = run_as(&fake, || gpu_device::thread_index());
    out.set(i, 1);
}

fn main() {}
