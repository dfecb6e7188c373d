"""PyTorch side of benches/multi_gpu.rs: torch.distributed.all_reduce (NCCL
backend, sum) of ELEMENTS f32 (default 64 Mi, 256 MiB), one process per GPU
(torch.multiprocessing), on every GPU of the machine.

Usage: python3 allreduce.py [ELEMENTS]
Timed as the Rust side times it: 5 warm-ups, then batches of 10 all-reduces
between torch.cuda.synchronize() calls, host clock, median of 5 batches.
Bus bandwidth as NCCL's tests compute it: algbw * 2(n-1)/n.
Rank 0 prints `RESULT torch_allreduce_busbw_gbps <v> GB/s` and `..._ms`.
"""
import os
import socket
import statistics
import sys
import time

# Never NVLink multicast (NVLS), in this process and the ones it starts.
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ELEMENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 64 << 20


def rank_main(rank, ranks, port):
    torch.cuda.set_device(rank)
    dist.init_process_group(
        "nccl",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=ranks,
        device_id=torch.device("cuda", rank),
    )
    x = torch.ones(ELEMENTS, dtype=torch.float32, device="cuda")
    for _ in range(5):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    batches = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(10):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        batches.append((time.perf_counter() - start) / 10)
    # 55 in-place sums of ones, each multiplying by `ranks`.
    expected = float(ranks) ** 55
    got = x[:4].cpu().tolist()
    if any(abs(v - expected) > 1e-6 * expected for v in got):
        print(f"FAILED rank {rank}: all-reduce gave {got}, expected {expected}", flush=True)
    seconds = statistics.median(batches)
    if rank == 0:
        bus = ELEMENTS * 4 / seconds / 1e9 * 2 * (ranks - 1) / ranks
        print(f"RESULT torch_allreduce_ms {seconds * 1e3:.4f} ms", flush=True)
        print(f"RESULT torch_allreduce_busbw_gbps {bus:.3f} GB/s", flush=True)
    dist.destroy_process_group()


def main():
    found = torch.cuda.device_count()
    ranks = int(sys.argv[2]) if len(sys.argv) > 2 else found
    if found < max(ranks, 2):
        print(f"FAILED needs {max(ranks, 2)} GPUs, found {found}")
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(rank_main, args=(ranks, port), nprocs=ranks, join=True)


if __name__ == "__main__":
    main()
