// `#[device_copy(unsafe(crate = "..."))]` is the user's promise that the
// path leads to `gpu_device`; a broken promise is theirs. Still, where it is
// cheap the derive catches one: it cannot implement another unsafe trait of
// the same name, here bytemuck's `NoUninit`, which a struct with padding
// must not implement (`bytemuck::cast_slice` would read the padding). Only
// `gpu_device::DeviceCopy` has the item the derive writes (a module that
// declares a trait with that item is not caught: the `unsafe` is the guard).
mod fake {
    pub use gpu_runtime::bytemuck::NoUninit as DeviceCopy;
}

#[derive(Clone, Copy, gpu_device::DeviceCopy)]
#[device_copy(unsafe(crate = "fake"))]
#[repr(C)]
pub struct Padded {
    pub small: u8,
    pub large: u32,
}

fn main() {
    let bytes: &[u8] = gpu_runtime::bytemuck::cast_slice(&[Padded { small: 1, large: 2 }]);
    println!("{bytes:?}");
}
