// Attack: break the seal of a generic kernel's instance trait (see
// `kernel_instance_forged.rs`): implement its supertrait, or rename the
// instance types the seal is implemented for. The supertrait's module is
// private, and the instance types are the kernel crate's impl, which no
// other can replace.
use gpu_kernels::fill;

#[derive(Clone, Copy, gpu_device::DeviceCopy)]
#[repr(C)]
pub struct Byte(u8);

impl fill::sealed::Sealed for Byte {}

impl fill::Instances for fill::Kernel {
    type Of0 = Byte;
    type Of1 = Byte;
    type Of2 = Byte;
    type Of3 = Byte;
    type Of4 = Byte;
}

fn main() {}
