// Copies go into one stage at a time: a fill's handle lives only inside its
// closure (then its group is committed), and two fills are never open at
// once, so no copy lands in a stage that another fill (or a wait) holds.
use gpu_device::cp_async::{CpAsyncRing, CpAsyncSource};

pub fn nested(ring: &mut CpAsyncRing<u16, 3>, src: CpAsyncSource<'_, u16>) {
    ring.fill(|outer| {
        ring.fill(|inner| {
            inner.copy(0, src, 0, 8);
        });
        outer.copy(0, src, 0, 8);
    });
}

pub fn escaped(ring: &mut CpAsyncRing<u16, 3>, src: CpAsyncSource<'_, u16>) {
    let mut kept = None;
    ring.fill(|stage| kept = Some(stage));
    let _ready = ring.wait();
    kept.unwrap().copy(0, src, 0, 8);
}

fn main() {}
