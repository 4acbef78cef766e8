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
 */
	.text
	.globl dlsym
	.type dlsym, @function
#if defined(__x86_64__)
dlsym:
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
dlsym:
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
	.size dlsym, .-dlsym
	.section .note.GNU-stack,"",%progbits
