// Attack: define an ownership map of one's own, where two threads own one
// element, and hand it to an output. Maps are sealed: only `gpu_device`
// defines them (each is a proof of disjointness).
use gpu_device::ownership::{Map, SliceMap};

pub enum EveryoneOwnsEverything {}
impl Map for EveryoneOwnsEverything {}
impl SliceMap for EveryoneOwnsEverything {}

fn main() {}
