// Attack: reach a kernel instance's entry points around their `unsafe`
// constructors: a launch of a `KernelFunction` (reachable from safe code
// through a kernel's instance trait) with parameters of one's own. The
// launch is the runtime's own (and a host entry's fields are private:
// `runtime_host_entry_fields.rs`).
use gpu_runtime::__private::KernelFunction;
use gpu_runtime::{LaunchConfig, Stream};

fn forge(stream: &Stream) {
    let function: &'static KernelFunction = <u32 as gpu_kernels::fill::Instance>::function();
    let mut params = [std::ptr::null_mut(); 3];
    let _ = unsafe { function.launch(&LaunchConfig::new(1, 32), stream, &mut params) };
}

fn main() {}
