// Attack: register tiles made for 256 threads in a kernel declared with
// blocks of 128: half the matrix would have no owner, or (with 512) two
// threads would own each element. The declaration does not compile.
use gpu_device::ownership::{Axis, DisjointMatrix, TileItems, Tiles};
use gpu_device::prelude::*;
pub static KERNEL_MODULE: gpu_runtime::EmbeddedModule = unsafe { gpu_runtime::EmbeddedModule::new("ui", "") };

type Tile4x4 = Tiles<Axis<16, 4>, Axis<16, 4>>;

#[kernel(block = 128)]
pub fn half_the_threads(mut c: DisjointMatrix<f32, Tile4x4>) {
    let tile = TileItems::<Tile4x4>::mine();
    c.set(&tile, 0, 0, 1.0);
}

// Launch bounds below the declared block.
#[kernel(block = 256, launch_bounds = 128)]
pub fn bounds_below_the_block(mut c: DisjointMatrix<f32, Tile4x4>) {
    let tile = TileItems::<Tile4x4>::mine();
    c.set(&tile, 0, 0, 1.0);
}

fn main() {}
