// Attack: a generic kernel's instance trait maps an element type to its
// compiled instance. Implementing it for a 1-byte type to return the `u32`
// instance would run the 4-byte entry point over 1-byte buffers, past their
// end. The trait is sealed: its supertrait is implemented, in a private
// module, for the listed instances alone.
use gpu_kernels::fill;

#[derive(Clone, Copy, gpu_device::DeviceCopy)]
#[repr(C)]
pub struct Byte(u8);

impl fill::Instance for Byte {
    fn function() -> &'static gpu_runtime::KernelFunction {
        <u32 as fill::Instance>::function()
    }
}

fn main() {}
