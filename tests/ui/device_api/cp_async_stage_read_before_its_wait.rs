// A ring's stage is read only through the `Ready` that its wait gives: a
// fill's handle has no reads, and a `Ready` borrows the ring, so it cannot
// be kept across the next fill or wait (a stage read after the ring moved
// on may be being overwritten).
use gpu_device::cp_async::CpAsyncRing;

pub fn read_while_filling(ring: &mut CpAsyncRing<u16, 3>) -> u16 {
    let mut first = 0;
    ring.fill(|stage| first = stage.get(0, 0));
    first
}

pub fn kept_across_the_next_wait(ring: &mut CpAsyncRing<u16, 3>) -> u16 {
    let stage = ring.wait();
    ring.fill(|_| {});
    let _next = ring.wait();
    stage.get(0, 0)
}

fn main() {}
