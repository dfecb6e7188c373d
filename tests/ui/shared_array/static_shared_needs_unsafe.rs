// `shared_array!`'s host side asks the simulated block for the array of its
// symbol. Safe code that asked for another invocation's symbol, with
// another type or size, could make the block hand that array out twice;
// the function is `unsafe` (only the macro calls it, for its own array).
fn main() {
    let _stolen: *mut u64 = gpu_device::__private::static_shared::<u64>("__gpu_shared_gpu_device_0", 32);
}
