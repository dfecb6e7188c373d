//! What kernel bodies use (the `gpu-device` crate), each feature launched:
//! shared memory, warp and block collectives, votes, grid sync, constant
//! memory, half precision, `println!`, random numbers, the ownership maps,
//! the matrix views and unaligned vector runs. (The misuses that trap are in
//! `tests/forced_simulator/`; those that do not compile in `tests/ui/`.)

mod cluster;
mod collectives;
mod constant_memory;
mod grid_sync;
mod half_precision;
mod matrix_views;
mod mbarrier;
mod neighbourhood;
mod ownership;
mod print;
mod random;
mod shared_memory;
mod tma;
mod tma_multicast;
mod tma_nd;
mod tma_store;
mod vector;
mod votes;
