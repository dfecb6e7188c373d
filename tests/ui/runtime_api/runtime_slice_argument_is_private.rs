// Attack: a slice argument of any address and length, handed to a launch.
// The runtime makes slice arguments from checked buffers alone; the type is
// not reachable.
fn main() {
    let slice = gpu_runtime::__private::SliceArg { ptr: 0, len: 1 << 40 };
    let _ = slice;
}
