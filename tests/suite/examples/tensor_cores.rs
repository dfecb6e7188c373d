//! `examples/tensor_cores.rs` as a child process: a bf16 `gpu_ops::matmul`
//! and a hand-written `mma.sync` kernel, each checked against the CPU by
//! the example (on the simulator here, on the GPU in the bundle).

#[test]
fn the_tensor_core_example_matches_the_cpu() {
    super::run("tensor_cores", "tensor_cores: matches the CPU");
}
