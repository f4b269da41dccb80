//! The stack pointer, read where the code that needs it runs: the stack
//! scrubs (`secret.rs`) and the assurance tests' probes (`audit.rs`).

/// This function's stack pointer (its frame's lowest address, once the
/// prologue has run: these frames have a fixed size).
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: copies the stack pointer to a register; touches no memory, stack or flags.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::asm!("mov {}, rsp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    // SAFETY: as above.
    #[cfg(target_arch = "aarch64")]
    unsafe {
        core::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    // Elsewhere: a local's address, which lies within this frame.
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let here = 0u8;
        sp = core::ptr::addr_of!(here) as usize;
    }
    sp
}
