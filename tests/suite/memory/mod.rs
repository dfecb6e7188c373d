//! Device memory: buffers' elements from the host, managed memory, 2-D and
//! strided copies, alignment, and the attacks on the tracking that orders
//! buffers across streams. (The tests that hold streams and time the
//! tracking's waits are in `tests/held_streams/`; the memory pool's
//! statistics in `tests/alone_memory_pool.rs`.)

mod alignment;
mod attacks;
mod elements;
mod managed;
mod strided_copies;
mod tensor_maps;
