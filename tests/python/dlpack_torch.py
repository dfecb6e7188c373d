"""PyTorch tensors round-tripped through the runtime's DLPack C ABI
(examples/dlpack_capi.rs), on a GPU, without a copy:

    torch tensors x, y -> __dlpack__(stream=s, max_version=(1, 0))
      -> DeviceBuffer::from_dlpack (Rust) -> saxpy kernel on s
      -> DeviceBuffer::into_dlpack -> torch.from_dlpack -> checked by torch

Build the library here, then run on the GPU machine:

    cargo build -p gpu-examples --release --example dlpack_capi
    python3 tests/python/dlpack_torch.py target/release/examples/libdlpack_capi.so

Prints one line per check and "N passed, 0 failed"; exits non-zero on a
failure.
"""

import ctypes
import gc
import sys
import time

import torch

VERSIONED = b"dltensor_versioned"
# A consumed capsule is renamed, so that its destructor leaves the tensor to
# the consumer (the DLPack protocol). The name must outlive the capsule: a
# module-level constant.
USED = b"used_dltensor_versioned"

api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.restype = ctypes.c_int
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

lib = ctypes.CDLL(sys.argv[1] if len(sys.argv) > 1 else "target/release/examples/libdlpack_capi.so")
lib.gpu_rt_saxpy.restype = ctypes.c_void_p
lib.gpu_rt_saxpy.argtypes = [
    ctypes.c_float,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_int,
    ctypes.c_void_p,
]
lib.gpu_rt_last_error.restype = ctypes.c_char_p


def take(tensor, stream):
    """The tensor's DLPackManagedTensorVersioned, ordered before `stream`."""
    if tensor.is_cuda:
        capsule = tensor.__dlpack__(stream=stream.cuda_stream, max_version=(1, 0))
    else:
        capsule = tensor.__dlpack__(max_version=(1, 0))
    pointer = api.PyCapsule_GetPointer(capsule, VERSIONED)
    api.PyCapsule_SetName(capsule, USED)
    return pointer


class Produced:
    """A tensor the library made, handed to torch.from_dlpack."""

    def __init__(self, pointer, device, stream):
        self.pointer, self.device, self.stream = pointer, device, stream

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        if max_version is None or max_version[0] < 1:
            raise BufferError("this producer exports DLPack 1.x (versioned) only")
        # The library queued its work on `self.stream`, the consumer's.
        if stream not in (None, self.stream.cuda_stream):
            raise BufferError(f"exported for stream {self.stream.cuda_stream}, asked for {stream}")
        return api.PyCapsule_New(self.pointer, VERSIONED, None)

    def __dlpack_device__(self):
        return (2, self.device)  # kDLCUDA


def saxpy(a, x, y, stream):
    ordinal = x.device.index if x.is_cuda else 0
    result = lib.gpu_rt_saxpy(a, take(x, stream), take(y, stream), ordinal, stream.cuda_stream)
    if not result:
        raise RuntimeError(lib.gpu_rt_last_error().decode())
    return torch.from_dlpack(Produced(result, ordinal, stream))


passed, failed = 0, 0


def check(name, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


device = torch.device("cuda", 0)
stream = torch.cuda.Stream(device)
print(f"torch {torch.__version__} on {torch.cuda.get_device_name(device)}")
with torch.cuda.stream(stream):
    # Values computed by torch, a 2-D shape, a slow producer on the same
    # stream (a large matmul first), and the result read by torch at once.
    n = 1 << 20
    big = torch.randn(4096, 4096, device=device)
    slow = (big @ big).sum() * 0  # queued on the stream before x is written
    x = torch.arange(n, device=device, dtype=torch.float32).reshape(1024, 1024) + slow
    y = torch.full((1024, 1024), 0.5, device=device)
    out = saxpy(2.0, x, y, stream)
    check("values: out == 2 x + y", torch.equal(out, 2.0 * x + y))
    check("shape kept", tuple(out.shape) == (1024, 1024), str(out.shape))
    check("dtype and device", out.dtype == torch.float32 and out.device == device)

    # The inputs' deleters run once the kernel has finished: torch gets
    # their memory back; the output's deleter returns it to the runtime.
    torch.cuda.synchronize()
    baseline = torch.cuda.memory_allocated(device)
    ok = True
    for _ in range(50):
        a = torch.rand(1 << 18, device=device)
        b = torch.rand(1 << 18, device=device)
        c = saxpy(3.0, a, b, stream)
        ok = ok and torch.allclose(c, 3.0 * a + b)
        del a, b, c
    gc.collect()
    torch.cuda.synchronize()
    for _ in range(100):  # the runtime's release thread gives them back
        if torch.cuda.memory_allocated(device) <= baseline:
            break
        time.sleep(0.01)
    check("50 round trips correct", ok)
    check(
        "inputs given back to torch",
        torch.cuda.memory_allocated(device) <= baseline,
        f"{torch.cuda.memory_allocated(device)} bytes allocated, {baseline} before",
    )

    # Refusals, each naming what was wrong (the tensors are deleted).
    for name, bad, expected in [
        ("non-contiguous", torch.ones(64, 64, device=device).t(), "not contiguous"),
        ("int32", torch.ones(64, dtype=torch.int32, device=device), "int32"),
        ("float64", torch.ones(64, dtype=torch.float64, device=device), "float64"),
        ("host", torch.ones(64), "host memory"),
    ]:
        try:
            saxpy(1.0, bad, bad.clone(), stream)
            check(f"refuses {name}", False, "accepted")
        except Exception as e:  # noqa: BLE001 (the message is what is checked)
            check(f"refuses {name}", expected in str(e), str(e))

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
