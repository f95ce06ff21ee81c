/* void oxiomp_invoke_microtask(void (*fn)(), int32_t *gtid, int32_t *tid, int64_t argc,
 *                              void **argv, void **exit_frame);
 * Calls fn(gtid, tid, argv[0], ..., argv[argc-1]) under the x86-64 SysV ABI: the first four
 * arguments go in rdx, rcx, r8, r9, the rest on the stack (last pushed first), with the stack
 * 16-byte aligned at the call. Any argc >= 0 works. When exit_frame is not null, this
 * function's frame pointer is stored there first: the implicit task's OMPT exit frame, which
 * is what __builtin_frame_address(1) gives inside fn. */
        .text
        .globl  oxiomp_invoke_microtask
        .hidden oxiomp_invoke_microtask
        .type   oxiomp_invoke_microtask, @function
oxiomp_invoke_microtask:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        testq   %r9, %r9
        jz      .Lnoexit
        movq    %rbp, (%r9)             /* *exit_frame = this frame */
.Lnoexit:
        movq    %rdi, %r11              /* fn */
        movq    %rsi, %rdi              /* gtid */
        movq    %rdx, %rsi              /* tid */
        movq    %rcx, %rax              /* argc */
        movq    %r8, %r10               /* argv */
        movq    %rax, %rcx
        subq    $4, %rcx                /* stack arguments = argc - 4 */
        jle     .Lregs
        testq   $1, %rcx                /* keep 16-byte alignment: pad an odd count */
        jz      .Lpush
        subq    $8, %rsp
.Lpush:
        leaq    -1(%rax), %rdx          /* i = argc - 1 down to 4 */
.Lnext:
        pushq   (%r10,%rdx,8)
        decq    %rdx
        cmpq    $4, %rdx
        jge     .Lnext
.Lregs:
        cmpq    $0, %rax
        jle     .Lcall
        movq    0(%r10), %rdx
        cmpq    $1, %rax
        jle     .Lcall
        movq    8(%r10), %rcx
        cmpq    $2, %rax
        jle     .Lcall
        movq    16(%r10), %r8
        cmpq    $3, %rax
        jle     .Lcall
        movq    24(%r10), %r9
.Lcall:
        xorl    %eax, %eax              /* no vector registers used (for variadic callees) */
        callq   *%r11
        leave
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size   oxiomp_invoke_microtask, .-oxiomp_invoke_microtask
        .section .note.GNU-stack,"",@progbits
