#!/usr/bin/env python3
"""Writes a stub CUDA driver library that does nothing, for counting the
runtime's own instructions on a machine without a GPU.

Every driver function the runtime loads (runtime/src/backend/cuda/ffi/mod.rs)
succeeds; the few whose outputs the runtime reads give plausible values (one
device with an H100's limits, memory from malloc, copies as memcpy), and
cuLaunchKernel returns at once. A program run with the stub first on the
library path and GPU_BACKEND=cuda goes through the whole CUDA backend:

    python3 scripts/launch-cost/stub_libcuda.py /tmp/stub-cuda
    GPU_BACKEND=cuda LD_LIBRARY_PATH=/tmp/stub-cuda \\
        valgrind --tool=callgrind target/release/examples/LAUNCH_LOOP

(LAUNCH_LOOP: a loop of `launch!`s; the difference between two loop lengths,
divided by the difference in launches, is the instructions per launch, as in
benches/NOTES.md, "The tracked launch path against bare cust".) Nothing runs
on a device: results of kernels are not computed.

With `--evict` (`stub_libcuda.py DIR --evict`), cuLaunchKernel also reads 4 MiB
of data and runs 64 KiB of straight-line code, as the real driver's 3 us of
work do, so that every line of data and code the runtime's launch path
touches between two launches comes from memory again; cachegrind's misses of
the runtime's functions then count the lines a launch touches:

    valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes ...
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SPECIAL = {
    "cuGetErrorName": 'int cuGetErrorName(int e, const char **n) { *n = "STUB_ERROR"; return 0; }',
    "cuGetErrorString": 'int cuGetErrorString(int e, const char **n) { *n = "stub error"; return 0; }',
    "cuDriverGetVersion": "int cuDriverGetVersion(int *v) { *v = 13000; return 0; }",
    "cuDeviceGetCount": "int cuDeviceGetCount(int *c) { *c = 1; return 0; }",
    "cuDeviceGet": "int cuDeviceGet(int *d, int o) { *d = o; return 0; }",
    "cuDeviceGetName": 'int cuDeviceGetName(char *n, int l, int d) { strncpy(n, "Stub GPU", l); return 0; }',
    "cuDeviceGetAttribute": """int cuDeviceGetAttribute(int *v, int a, int d) {
    switch (a) {
    case 1: case 2: case 3: *v = 1024; break;  /* threads per block, block x, y */
    case 4: *v = 64; break;                    /* block z */
    case 5: *v = 2147483647; break;            /* grid x */
    case 6: case 7: *v = 65535; break;         /* grid y, z */
    case 8: *v = 49152; break;                 /* shared per block */
    case 16: *v = 132; break;                  /* multiprocessors */
    case 75: *v = 9; break; case 76: *v = 0; break;  /* compute capability */
    case 97: *v = 232448; break;               /* shared per block, opt-in */
    default: *v = 0;
    }
    return 0;
}""",
    "cuDeviceGetDefaultMemPool": "int cuDeviceGetDefaultMemPool(void **p, int d) { *p = (void *)0x1000; return 0; }",
    "cuDevicePrimaryCtxRetain": "int cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)0x2000; return 0; }",
    "cuCtxGetStreamPriorityRange": "int cuCtxGetStreamPriorityRange(int *l, int *g) { if (l) *l = 0; if (g) *g = -5; return 0; }",
    "cuMemGetInfo_v2": "int cuMemGetInfo_v2(size_t *f, size_t *t) { *f = *t = 80ull << 30; return 0; }",
    "cuModuleGetGlobal_v2": "int cuModuleGetGlobal_v2(unsigned long long *d, size_t *n, void *m, const char *name) { static unsigned long long g[64]; if (d) *d = (unsigned long long)g; if (n) *n = 8; return 0; }",
    "cuMemAllocAsync": "int cuMemAllocAsync(unsigned long long *p, size_t n, void *s) { *p = (unsigned long long)malloc(n ? n : 1); return 0; }",
    "cuMemFreeAsync": "int cuMemFreeAsync(unsigned long long p, void *s) { free((void *)p); return 0; }",
    "cuMemHostAlloc": "int cuMemHostAlloc(void **p, size_t n, unsigned f) { *p = malloc(n ? n : 1); return 0; }",
    "cuMemFreeHost": "int cuMemFreeHost(void *p) { free(p); return 0; }",
    "cuMemHostGetDevicePointer_v2": "int cuMemHostGetDevicePointer_v2(unsigned long long *d, void *p, unsigned f) { *d = (unsigned long long)p; return 0; }",
    "cuMemsetD8Async": "int cuMemsetD8Async(unsigned long long p, unsigned char v, size_t n, void *s) { memset((void *)p, v, n); return 0; }",
    "cuMemcpyHtoDAsync_v2": "int cuMemcpyHtoDAsync_v2(unsigned long long d, const void *h, size_t n, void *s) { memcpy((void *)d, h, n); return 0; }",
    "cuMemcpyDtoHAsync_v2": "int cuMemcpyDtoHAsync_v2(void *h, unsigned long long d, size_t n, void *s) { memcpy(h, (void *)d, n); return 0; }",
    "cuMemcpyDtoDAsync_v2": "int cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s_, size_t n, void *s) { memcpy((void *)d, (void *)s_, n); return 0; }",
    "cuStreamCreateWithPriority": "int cuStreamCreateWithPriority(void **s, unsigned f, int p) { *s = malloc(16); return 0; }",
    "cuStreamGetFlags": "int cuStreamGetFlags(void *s, unsigned *f) { *f = 1; return 0; }",
    "cuStreamGetPriority": "int cuStreamGetPriority(void *s, int *p) { *p = 0; return 0; }",
    "cuStreamGetCaptureInfo_v2": "int cuStreamGetCaptureInfo_v2(void *s, int *st, unsigned long long *id, void **g, const void ***deps, size_t *n) { *st = 0; if (id) *id = 0; if (n) *n = 0; return 0; }",
    "cuEventCreate": "int cuEventCreate(void **e, unsigned f) { *e = malloc(16); return 0; }",
    "cuEventElapsedTime": "int cuEventElapsedTime(float *ms, void *a, void *b) { *ms = 0; return 0; }",
    "cuModuleLoadDataEx": "int cuModuleLoadDataEx(void **m, const void *i, unsigned c, int *o, void **v) { *m = malloc(16); return 0; }",
    "cuModuleGetFunction": "int cuModuleGetFunction(void **f, void *m, const char *n) { *f = malloc(16); return 0; }",
    "cuFuncGetAttribute": """int cuFuncGetAttribute(int *v, int a, void *f) {
    switch (a) {
    case 0: *v = 1024; break;   /* max threads per block */
    case 8: *v = 49152; break;  /* max dynamic shared */
    default: *v = 0;
    }
    return 0;
}""",
}


EVICTING_LAUNCH = """static char evict_data[4 << 20];
int cuLaunchKernel() {
    for (size_t i = 0; i < sizeof evict_data; i += 64) ((volatile char *)evict_data)[i]++;
    __asm__ volatile(".rept 65536\\n nop\\n .endr");
    return 0;
}"""


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--evict"]
    if "--evict" in sys.argv[1:]:
        SPECIAL["cuLaunchKernel"] = EVICTING_LAUNCH
    out = pathlib.Path(args[0] if args else "/tmp/stub-cuda")
    out.mkdir(parents=True, exist_ok=True)
    ffi = (ROOT / "runtime/src/backend/cuda/ffi/mod.rs").read_text()
    names = re.findall(r"fn (cu\w+)\(", ffi[ffi.index("driver_functions! {"):])
    source = ["#include <stdlib.h>", "#include <string.h>", "#include <stddef.h>"]
    source += [SPECIAL.get(name, f"int {name}() {{ return 0; }}") for name in names]
    (out / "stub_libcuda.c").write_text("\n".join(source) + "\n")
    subprocess.run(
        ["gcc", "-O2", "-shared", "-fPIC", "-o", str(out / "libcuda.so.1"), str(out / "stub_libcuda.c")],
        check=True,
    )
    print(f"stub driver for {len(names)} functions: {out / 'libcuda.so.1'}")


if __name__ == "__main__":
    main()
