use gpu_device::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Params {
    pub scale: &'static f32,
}

fn main() {}
