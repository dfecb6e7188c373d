"""numba-cuda's device random numbers, for the comparison in benches/vectorize.rs.

For each seed, creates `threads` states with `create_xoroshiro128p_states`
and runs a kernel in which each thread draws, in this order, 4 uniform
float32, 4 uniform float64, 4 normal float32 and 4 normal float64 (as
`gpu_test_kernels::random::xoroshiro_draws` does), twice (the second
launch continues each thread's sequence). Prints one JSON object:

    {"seeds": {"1": {"states": [[s0, s1], ...],
                     "launches": [{"uniform_f32": [[x, x, x, x], ...], ...}, ...]}}}

Floats are written as their bit patterns (integers) so that nothing is
lost in decimal. Usage:

    python3 numba_rng_reference.py [--seeds 1,12345] [--threads 70] [--emulate]

`--emulate` computes the same JSON in plain Python from the algorithm (no
numba, no GPU): for checking the comparison itself on a machine without
them (`cargo bench --bench vectorize -- --quick --helpers benches/python`
passes it); the reference for the real check is numba-cuda's.
"""
import argparse
import json
import math
import struct
import sys

MASK = (1 << 64) - 1


def numba_states_and_draws(seeds, n):
    import numpy as np

    np.row_stack = np.vstack  # numba-cuda with numpy 2.5 needs this before import
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

    out = {"seeds": {}}
    for seed in seeds:
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
    return out


# --emulate: the algorithm in plain Python.


def f32(x):
    """x rounded to float32 (nearest, ties to even), as a Python float."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def init(seed):
    z = (seed + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    return [z, z]


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


def step(s):
    s0, s1 = s
    result = (s0 + s1) & MASK
    s1 ^= s0
    s[0] = rotl(s0, 55) ^ s1 ^ ((s1 << 14) & MASK)
    s[1] = rotl(s1, 36)
    return result


def jump(s):
    a = b = 0
    for word in (0xBEAC0467EBA5FACB, 0xD86B048B86AA9922):
        for bit in range(64):
            if word & (1 << bit):
                a ^= s[0]
                b ^= s[1]
            step(s)
    s[0], s[1] = a, b


def uniform_f64(s):
    return (step(s) >> 11) * (1.0 / (1 << 53))


def uniform_f32(s):
    return f32(uniform_f64(s))


def normal_f32(s):
    u1, u2 = uniform_f32(s), uniform_f32(s)
    log = f32(math.log(u1)) if u1 > 0 else -math.inf
    return f32(f32(math.sqrt(f32(-2.0 * log))) * f32(math.cos(f32(f32(2 * math.pi) * u2))))


def normal_f64(s):
    u1, u2 = uniform_f32(s), uniform_f32(s)
    log = f32(math.log(u1)) if u1 > 0 else -math.inf
    return math.sqrt(-2.0 * log) * math.cos(2 * math.pi * u2)


def emulated_states_and_draws(seeds, n):
    out = {"seeds": {}}
    for seed in seeds:
        states = []
        s = init(seed)
        for i in range(n):
            if i > 0:
                jump(s)
            states.append(list(s))
        entry = {"states": [list(s) for s in states], "launches": []}
        for _ in range(2):
            launch = {"uniform_f32": [], "uniform_f64": [], "normal_f32": [], "normal_f64": []}
            for s in states:
                launch["uniform_f32"].append([f32_bits(uniform_f32(s)) for _ in range(4)])
                launch["uniform_f64"].append([f64_bits(uniform_f64(s)) for _ in range(4)])
                launch["normal_f32"].append([f32_bits(normal_f32(s)) for _ in range(4)])
                launch["normal_f64"].append([f64_bits(normal_f64(s)) for _ in range(4)])
            entry["launches"].append(launch)
        out["seeds"][str(seed)] = entry
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="1,12345")
    parser.add_argument("--threads", type=int, default=70)
    parser.add_argument("--emulate", action="store_true")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    if args.emulate:
        out = emulated_states_and_draws(seeds, args.threads)
    else:
        out = numba_states_and_draws(seeds, args.threads)
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
