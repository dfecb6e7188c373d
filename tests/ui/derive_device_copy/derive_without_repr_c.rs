use gpu_device::DeviceCopy;

#[derive(Clone, Copy, DeviceCopy)]
pub struct Params {
    pub scale: f32,
}

fn main() {}
