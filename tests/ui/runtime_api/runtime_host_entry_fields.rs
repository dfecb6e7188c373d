// Attack: a host entry (what the simulator runs for a kernel instance)
// written as a struct literal, around its `unsafe` constructor: a body of
// one's own under another kernel's parameters. Its fields are private.
use gpu_runtime::__private::HostEntry;

unsafe fn nothing(_: *const *mut std::ffi::c_void) {}

fn main() {
    let literal = HostEntry { call: nothing, call_1d: nothing, call_2d: None, param_sizes: &[] };
    let _ = literal;
}
