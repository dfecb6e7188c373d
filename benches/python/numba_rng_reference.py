"""numba-cuda's device random numbers, for the comparison in benches/vectorize.rs.

For each seed, creates `threads` states with `create_xoroshiro128p_states`
and runs a kernel in which each thread draws, in this order, 4 uniform
float32, 4 uniform float64, 4 normal float32 and 4 normal float64 (as
`gpu_test_kernels::random::xoroshiro_draws` does), twice (the second
launch continues each thread's sequence). Prints one JSON object:

    {"seeds": {"1": {"states": [[s0, s1], ...],
                     "launches": [{"uniform_f32": [[x, x, x, x], ...], ...}, ...]}}}

Floats are written as their bit patterns (integers) so that nothing is
lost in decimal. Usage: python3 numba_rng_reference.py [--seeds 1,12345] [--threads 70]
"""
import argparse
import json
import sys

import numpy as np
from numba import cuda
from numba.cuda.random import (
    create_xoroshiro128p_states,
    xoroshiro128p_normal_float32,
    xoroshiro128p_normal_float64,
    xoroshiro128p_uniform_float32,
    xoroshiro128p_uniform_float64,
)


@cuda.jit
def draws(states, u32, u64, n32, n64):
    i = cuda.grid(1)
    if i < states.shape[0]:
        for k in range(4):
            u32[i, k] = xoroshiro128p_uniform_float32(states, i)
        for k in range(4):
            u64[i, k] = xoroshiro128p_uniform_float64(states, i)
        for k in range(4):
            n32[i, k] = xoroshiro128p_normal_float32(states, i)
        for k in range(4):
            n64[i, k] = xoroshiro128p_normal_float64(states, i)


def bits(array, dtype):
    return array.view(dtype).tolist()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="1,12345")
    parser.add_argument("--threads", type=int, default=70)
    args = parser.parse_args()
    n = args.threads
    out = {"seeds": {}}
    for seed in [int(s) for s in args.seeds.split(",")]:
        stream = cuda.stream()
        states = create_xoroshiro128p_states(n, seed=seed, stream=stream)
        host_states = states.copy_to_host(stream=stream)
        entry = {
            "states": [[int(s["s0"]), int(s["s1"])] for s in host_states],
            "launches": [],
        }
        for _ in range(2):
            u32 = cuda.device_array((n, 4), np.float32, stream=stream)
            u64 = cuda.device_array((n, 4), np.float64, stream=stream)
            n32 = cuda.device_array((n, 4), np.float32, stream=stream)
            n64 = cuda.device_array((n, 4), np.float64, stream=stream)
            draws[(n + 63) // 64, 64, stream](states, u32, u64, n32, n64)
            entry["launches"].append(
                {
                    "uniform_f32": bits(u32.copy_to_host(stream=stream), np.uint32),
                    "uniform_f64": bits(u64.copy_to_host(stream=stream), np.uint64),
                    "normal_f32": bits(n32.copy_to_host(stream=stream), np.uint32),
                    "normal_f64": bits(n64.copy_to_host(stream=stream), np.uint64),
                }
            )
        stream.synchronize()
        out["seeds"][str(seed)] = entry
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
