// Attack: make a launcher run another kernel's entry point, or another
// instance's, from safe code: a `KernelFunction` of one kernel's entry
// points with another's description, a host entry running another body, an
// argument builder filled with anything. Each constructor is `unsafe` (the
// fields and the launch itself are private: `runtime_entry_internals.rs`).
use gpu_device::__private::interface::{Description, Instance};
use gpu_runtime::__private::{HostEntry, KernelFunction, LaunchArgs};
use gpu_runtime::{EmbeddedModule, LaunchConfig, Stream};

unsafe fn nothing(_: *const *mut std::ffi::c_void) {}

static MODULE: EmbeddedModule = unsafe { EmbeddedModule::new("ui", "") };
const DESCRIPTION: Description =
    Description { entry: "k", instance: Instance::None, block: None, lengths: &[], launch_bounds: None, cooperative: false, cluster: None, arch: None, params: &[] };
static FORGED: KernelFunction = KernelFunction::new(
    &MODULE,
    "k",
    ["k", "k__1d"],
    None,
    HostEntry::new(nothing, nothing, None, &[]),
    &DESCRIPTION,
    gpu_runtime::crate_identity!(),
);

fn forge(stream: &Stream) {
    let function: &'static KernelFunction = <u32 as gpu_kernels::fill::Instance>::function();
    let config = LaunchConfig::new(1, 32);
    let args = LaunchArgs::<'_, 3>::for_launch(function, &config, stream);
    let _ = (args, &FORGED);
}

fn main() {}
