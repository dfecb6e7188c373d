//! Kernel panics: a panic executes `trap`, which aborts the launch. The host
//! runtime sees the failed launch and reports the kernel by name.

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    crate::arch::trap()
}
