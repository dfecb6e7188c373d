//! An alternate signal stack for threads that have none.

/// Gives this OS thread an alternate signal stack if it has none (threads
/// that Rust's `std` starts have one), so that a stack overflow can be
/// handled. Kept until the thread ends.
pub(crate) fn ensure_alternate_stack() {
    #[cfg(target_os = "linux")]
    {
        struct AlternateStack {
            base: *mut libc::c_void,
            len: usize,
        }
        impl Drop for AlternateStack {
            fn drop(&mut self) {
                if self.base.is_null() {
                    return;
                }
                // SAFETY: disables the alternate stack this thread installed,
                // then unmaps its memory, which nothing uses any more.
                unsafe {
                    let disable = libc::stack_t {
                        ss_sp: std::ptr::null_mut(),
                        ss_flags: libc::SS_DISABLE,
                        ss_size: 0,
                    };
                    libc::sigaltstack(&disable, std::ptr::null_mut());
                    libc::munmap(self.base, self.len);
                }
            }
        }
        thread_local! {
            static STACK: AlternateStack = {
                // SAFETY: `sigaltstack` reads and writes the structures
                // passed; the new stack is a fresh private mapping kept
                // until the thread ends (then disabled before unmapping).
                unsafe {
                    let mut current: libc::stack_t = std::mem::zeroed();
                    libc::sigaltstack(std::ptr::null(), &mut current);
                    if current.ss_flags & libc::SS_DISABLE == 0 {
                        AlternateStack { base: std::ptr::null_mut(), len: 0 }
                    } else {
                        let len = 64 * 1024;
                        let base = libc::mmap(
                            std::ptr::null_mut(),
                            len,
                            libc::PROT_READ | libc::PROT_WRITE,
                            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                            -1,
                            0,
                        );
                        if base == libc::MAP_FAILED {
                            AlternateStack { base: std::ptr::null_mut(), len: 0 }
                        } else {
                            let stack = libc::stack_t { ss_sp: base, ss_flags: 0, ss_size: len };
                            libc::sigaltstack(&stack, std::ptr::null_mut());
                            AlternateStack { base, len }
                        }
                    }
                }
            };
        }
        STACK.with(|_| {});
    }
}
