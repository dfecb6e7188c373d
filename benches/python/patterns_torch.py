"""torch baselines of issue #20's benchmark table, beside the CUDA C twins of
benches/cuda/patterns.cu: the same problems and sizes, the same table format.

  python3 benches/python/patterns_torch.py [--quick]

Each result is checked against a float64 (int64 for the scan) computation on the
GPU before and after timing; --quick checks at small sizes and does not time.
FP32 stays FP32: TF32 is off for matmul and for cuDNN's convolutions.
"""
import torch
import torch.nn.functional as F

from twins_common import finish, header, run

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True  # cuDNN picks its fastest convolution (during the warm-up)
DEV = "cuda"
U = 2.0 ** -24  # f32 unit roundoff


def gamma(n):
    return n * U / (1 - n * U)


def uniform(*shape, seed, scale=1.0):
    g = torch.Generator(device=DEV).manual_seed(seed)
    return (torch.rand(*shape, generator=g, device=DEV) * 2 - 1) * scale


def scan(n, quick):
    g = torch.Generator(device=DEV).manual_seed(10)
    x = torch.randint(0, 2**31 - 1, (n,), generator=g, device=DEV, dtype=torch.int32)
    want = torch.cumsum(x.to(torch.int64), 0) & 0xFFFFFFFF
    out = {}

    def work():
        out["y"] = torch.cumsum(x, 0, dtype=torch.int32)

    def check():
        wrong = int(((out["y"].to(torch.int64) & 0xFFFFFFFF) != want).sum())
        return wrong == 0, float(wrong != 0)

    run("exclusive scan, u32 (issue #20)", "torch.cumsum (inclusive, int32: the same work)", f"{n} u32", work, check,
        2.0 * n * 4, "GB/s", quick)


def softmax(rows, cols, quick):
    x = uniform(rows, cols, seed=11, scale=8.0)
    want = torch.softmax(x.double(), 1)
    out = {}

    def work():
        out["y"] = torch.softmax(x, 1)

    def check():
        err = float(((out["y"].double() - want).abs() / want).max())
        return err <= 1e-5, err

    run("row softmax, f32 (issue #20)", "torch.softmax", f"{rows} x {cols}", work, check, 2.0 * rows * cols * 4,
        "GB/s", quick)


def sgemm(m, n, k, quick):
    a, b = uniform(m, k, seed=1), uniform(k, n, seed=2)
    ad, bd = a.double(), b.double()
    want = ad @ bd
    bound = gamma(k) * (ad.abs() @ bd.abs()) * 1.01
    out = {}

    def work():
        out["c"] = torch.matmul(a, b)

    def check():
        err = (out["c"].double() - want).abs()
        return bool((err <= bound).all()), float(err.max())

    run("SGEMM, f32 (issue #20)", "torch.matmul (cuBLAS FP32, allow_tf32 = False)", f"{m}x{n}x{k}", work, check,
        2.0 * m * n * k, "TFLOP/s", quick)


def conv(h, w, quick):
    x = uniform(1, 1, h, w, seed=12)
    f = uniform(1, 1, 5, 5, seed=13)
    want = F.conv2d(x.double(), f.double(), padding=2)
    bound = gamma(25) * F.conv2d(x.double().abs(), f.double().abs(), padding=2) * 1.01
    out = {}

    def work():
        out["y"] = F.conv2d(x, f, padding=2)

    def check():
        err = (out["y"].double() - want).abs()
        return bool((err <= bound).all()), float(err.max())

    run("5x5 convolution and layer norm, f32 (issue #20)", "torch.nn.functional.conv2d (cuDNN, TF32 off)",
        f"{h} x {w}", work, check, 2.0 * h * w * 4, "GB/s", quick)


def layer_norm(rows, cols, quick):
    x = uniform(rows, cols, seed=14)
    g, b = uniform(cols, seed=15), uniform(cols, seed=16)
    want = F.layer_norm(x.double(), (cols,), g.double(), b.double(), 1e-5)
    out = {}

    def work():
        out["y"] = F.layer_norm(x, (cols,), g, b, 1e-5)

    def check():
        err = (out["y"].double() - want).abs()
        return bool((err <= 1e-5 * (1 + want.abs())).all()), float(err.max())

    run("5x5 convolution and layer norm, f32 (issue #20)", "torch.nn.functional.layer_norm", f"{rows} x {cols}", work,
        check, 2.0 * rows * cols * 4, "GB/s", quick)


def main():
    quick = header()
    if quick:
        for n in (1, 4097, (1 << 20) + 7):
            scan(n, True)
        softmax(65537, 1000, True)
        softmax(7, 4099, True)
        sgemm(129, 131, 67, True)
        conv(37, 45, True)
        layer_norm(3, 4099, True)
    else:
        scan((1 << 26) + 12345, False)
        softmax(100003, 1000, False)
        softmax(100003, 1024, False)
        softmax(16411, 4099, False)
        sgemm(4099, 4097, 4095, False)
        sgemm(4096, 4096, 4096, False)
        conv(8191, 4097, False)
        layer_norm(16411, 4099, False)
        layer_norm(100003, 1000, False)
    finish()


if __name__ == "__main__":
    main()
