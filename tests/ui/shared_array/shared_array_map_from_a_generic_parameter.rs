// Attack: one `shared_array!` (one static array) handed out under two maps
// by a generic function, so that a warp's leader and a thread owning the
// same slot by the default rule both write it. The map of a shared array
// cannot name a generic parameter.
use gpu_device::ownership::SharedMap;
use gpu_device::shared::Shared;
use gpu_device::shared_array;

pub fn slots<M: SharedMap>() -> Shared<u32, 8, M> {
    shared_array!(u32; 8, map = M)
}

fn main() {}
