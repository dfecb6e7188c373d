"""torch baseline of issue #22's bf16 GEMM table, beside the CUDA C twins of
benches/cuda/gemm_tc.cu: C = A * B^T with A (M x K) and B (N x K) bf16, f32
accumulation, bf16 out (torch.matmul in bf16 calls cuBLAS), the same sizes and
table format.

  python3 benches/python/gemm_torch.py [--quick]

For the odd shape two rows: contiguous operands (rows of 4095 bf16: not 16-byte
aligned), and operands with a leading dimension padded to a multiple of 8 (the
layout the CUDA C kernels use, as views of wider tensors). Each result is checked
against a float64 product: |C - exact| <= 1.01 (2^-8 |exact| + gamma_K |a_i| |b_j|)
(the bf16 rounding, and the f32 accumulation bounded by Cauchy-Schwarz), gamma_K = K 2^-23 / (1 - K 2^-23).
"""
import torch

from twins_common import finish, header, run

DEV = "cuda"


def operand(rows, k, ld, seed):
    g = torch.Generator(device=DEV).manual_seed(seed)
    full = (torch.rand(rows, ld, generator=g, device=DEV) * 2 - 1).to(torch.bfloat16)
    return full[:, :k]  # contiguous when ld == k


def gemm(m, n, k, padded, quick):
    ld = (k + 7) // 8 * 8 if padded else k
    a, b = operand(m, k, ld, 1), operand(n, k, ld, 2)
    ad, bd = a.double(), b.double()
    want = ad @ bd.t()
    gam = k * 2.0**-23 / (1 - k * 2.0**-23)
    bound = 1.01 * (2.0**-8 * want.abs() + gam * torch.outer(ad.norm(dim=1), bd.norm(dim=1)))
    del ad, bd
    out = {}

    def work():
        out["c"] = torch.matmul(a, b.t())

    def check():
        err = (out["c"].double() - want).abs()
        return bool((err <= bound).all()), float(err.max())

    name = "torch.matmul bf16 (cuBLAS)" + (", lda = ldb padded to 8" if padded and ld != k else "")
    run("bf16 GEMM (issue #22)", name, f"{m}x{n}x{k}", work, check, 2.0 * m * n * k, "TFLOP/s", quick)


def main():
    quick = header()
    if quick:
        gemm(520, 777, 333, False, True)
        gemm(520, 777, 333, True, True)
    else:
        gemm(8192, 8192, 8192, False, False)
        gemm(4096, 4096, 4096, False, False)
        gemm(4099, 4097, 4095, False, False)
        gemm(4099, 4097, 4095, True, False)
    finish()


if __name__ == "__main__":
    main()
