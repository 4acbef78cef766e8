/*
 * dlsym-stub.S - libmemtrace's dlsym: ask mt_dlsym_filter (resolve.c) for
 * an answer; when it has none, tail-jump to the real dlsym.
 *
 * Why assembly: glibc resolves dlsym(RTLD_NEXT, ...) relative to the
 * caller's return address. A C wrapper that called the real dlsym would make
 * every RTLD_NEXT look-up of every other library (other interposers,
 * sanitizers, Python extensions) start after libmemtrace instead of after
 * the caller. The jump leaves the caller's return address in place, so the
 * real dlsym sees the real caller.
 *
 * Versions: the stub is exported as dlsym@@GLIBC_2.34 (the default, which
 * unversioned references bind to) and dlsym@GLIBC_2.2.5 (aarch64:
 * GLIBC_2.17), the versions of glibc's own. Another preload tool that
 * interposes dlsym and forwards with dlvsym(RTLD_NEXT, "dlsym",
 * "GLIBC_2.34") then finds this one when it comes first in LD_PRELOAD:
 * glibc's dlvsym skips unversioned definitions.
 */
	.text
	.globl mt_dlsym
	.type mt_dlsym, @function
	.symver mt_dlsym, dlsym@@GLIBC_2.34, remove
	.globl mt_dlsym_compat
	.type mt_dlsym_compat, @function
	.set mt_dlsym_compat, mt_dlsym
#if defined(__x86_64__)
	.symver mt_dlsym_compat, dlsym@GLIBC_2.2.5, remove
#elif defined(__aarch64__)
	.symver mt_dlsym_compat, dlsym@GLIBC_2.17, remove
#endif
#if defined(__x86_64__)
mt_dlsym:
	.cfi_startproc
	push %rdi
	.cfi_adjust_cfa_offset 8
	push %rsi
	.cfi_adjust_cfa_offset 8
	sub $8, %rsp                    /* 16-byte stack alignment for the call */
	.cfi_adjust_cfa_offset 8
	call mt_dlsym_filter
	add $8, %rsp
	.cfi_adjust_cfa_offset -8
	pop %rsi
	.cfi_adjust_cfa_offset -8
	pop %rdi
	.cfi_adjust_cfa_offset -8
	test %rax, %rax
	jz 1f
	ret
1:	jmp *mt_real_dlsym(%rip)
	.cfi_endproc
#elif defined(__aarch64__)
mt_dlsym:
	.cfi_startproc
	stp x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov x29, sp
	stp x0, x1, [sp, #16]
	bl mt_dlsym_filter
	mov x2, x0
	ldp x0, x1, [sp, #16]
	ldp x29, x30, [sp], #32
	.cfi_def_cfa_offset 0
	.cfi_restore 29
	.cfi_restore 30
	cbz x2, 1f
	mov x0, x2
	ret
1:	adrp x16, mt_real_dlsym
	ldr x16, [x16, :lo12:mt_real_dlsym]
	br x16
	.cfi_endproc
#else
#error "dlsym-stub.S: add this architecture's tail jump"
#endif
	.size mt_dlsym, .-mt_dlsym
	.section .note.GNU-stack,"",%progbits
