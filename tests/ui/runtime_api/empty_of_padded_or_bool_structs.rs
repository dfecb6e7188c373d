// Attack (held): `empty` leaves memory as the allocator found it. A struct
// holding a `bool`, or an array of them, may then read as invalid values;
// `empty` needs `AnyBitPattern`, which `DeviceCopy` structs do not give.
use gpu_device::DeviceCopy;
use gpu_runtime::DeviceBuffer;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Flagged {
    value: f32,
    valid: bool,
}

fn main() {
    let _a = DeviceBuffer::<Flagged>::empty(16);
    let _b = DeviceBuffer::<[bool; 4]>::empty(16);
}
