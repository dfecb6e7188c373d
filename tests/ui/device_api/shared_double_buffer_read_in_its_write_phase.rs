// Attack: read a double buffer's second array (written in the Reading
// phase) while other threads write it. It is read with a Writing token
// only, written with a Reading one; and the default array the other way.
use gpu_device::prelude::*;
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

#[kernel]
pub fn read_while_written(mut out: DisjointSlice<u32>, block: Block) {
    let odd = shared_array!(u32; 64, written_in = Reading);
    let i = thread_index();
    let mut r = block.sync();
    odd.set_own(&mut r, 0, 1);
    let v = odd.get(&r, 0);
    out.set(i, v);
}

#[kernel]
pub fn write_in_the_other_phase(block: Block) {
    let odd = shared_array!(u32; 64, written_in = Reading);
    let mut w = block;
    odd.set_own(&mut w, 0, 1);
}

fn main() {}
