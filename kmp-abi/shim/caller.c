// caller.c - the entries at which a team meets a construct (a barrier, a loop's start, single,
// ordered) note the return address of the program's call, for the run-time checks: in a
// program built without -g a construct's place is that address, and finding it by unwinding
// the stack costs far more than the construct. Each entry stores the address in a word of
// the thread's static TLS and jumps to its Rust body (`oxiomp_kmpc_...` for `__kmpc_...`); the
// checks take the word (and clear it) at each construct met. The store is all a program
// without the checks pays.
#include <stdint.h>

typedef struct ident ident_t;

__thread void *oxiomp_noted_caller __attribute__((tls_model("initial-exec"), visibility("hidden")));
#define caller oxiomp_noted_caller

// The address the calling thread's last noted entry was called from (0 if none since the
// last take), cleared.
void *oxiomp_take_caller(void) {
  void *c = caller;
  caller = 0;
  return c;
}

#define NOTE() (caller = __builtin_return_address(0))

void oxiomp_kmpc_barrier(ident_t *loc, int32_t gtid);
void __kmpc_barrier(ident_t *loc, int32_t gtid) {
  NOTE();
  oxiomp_kmpc_barrier(loc, gtid);
}

int32_t oxiomp_kmpc_single(ident_t *loc, int32_t gtid);
int32_t __kmpc_single(ident_t *loc, int32_t gtid) {
  NOTE();
  return oxiomp_kmpc_single(loc, gtid);
}

void oxiomp_kmpc_ordered(ident_t *loc, int32_t gtid);
void __kmpc_ordered(ident_t *loc, int32_t gtid) {
  NOTE();
  oxiomp_kmpc_ordered(loc, gtid);
}

#define STATIC_INIT(name, body, T, ST)                                                               \
  void body(ident_t *loc, int32_t gtid, int32_t sched, int32_t *plast, T *plower,      \
                     T *pupper, ST *pstride, ST incr, ST chunk);                                \
  void name(ident_t *loc, int32_t gtid, int32_t sched, int32_t *plast, T *plower, T *pupper,    \
            ST *pstride, ST incr, ST chunk) {                                                   \
    NOTE();                                                                                     \
    body(loc, gtid, sched, plast, plower, pupper, pstride, incr, chunk);               \
  }

STATIC_INIT(__kmpc_for_static_init_4, oxiomp_kmpc_for_static_init_4, int32_t, int32_t)
STATIC_INIT(__kmpc_for_static_init_4u, oxiomp_kmpc_for_static_init_4u, uint32_t, int32_t)
STATIC_INIT(__kmpc_for_static_init_8, oxiomp_kmpc_for_static_init_8, int64_t, int64_t)
STATIC_INIT(__kmpc_for_static_init_8u, oxiomp_kmpc_for_static_init_8u, uint64_t, int64_t)

#define DISPATCH_INIT(name, body, T, ST)                                                             \
  void body(ident_t *loc, int32_t gtid, int32_t sched, T lb, T ub, ST st, ST chunk);   \
  void name(ident_t *loc, int32_t gtid, int32_t sched, T lb, T ub, ST st, ST chunk) {           \
    NOTE();                                                                                     \
    body(loc, gtid, sched, lb, ub, st, chunk);                                         \
  }

DISPATCH_INIT(__kmpc_dispatch_init_4, oxiomp_kmpc_dispatch_init_4, int32_t, int32_t)
DISPATCH_INIT(__kmpc_dispatch_init_4u, oxiomp_kmpc_dispatch_init_4u, uint32_t, int32_t)
DISPATCH_INIT(__kmpc_dispatch_init_8, oxiomp_kmpc_dispatch_init_8, int64_t, int64_t)
DISPATCH_INIT(__kmpc_dispatch_init_8u, oxiomp_kmpc_dispatch_init_8u, uint64_t, int64_t)

// gcc's entries that meet a construct: the same note, in assembly (their signatures vary, and
// a jump keeps every argument register as the program set it). The return address is at the
// stack's top on entry; r10 and r11 carry no argument. Each jumps to its Rust body,
// `oxiomp_GOMP_...`.
#define NOTED(name)                                                                              \
  __asm__(".text\n"                                                                            \
          ".globl " #name "\n"                                                                 \
          ".type " #name ", @function\n"                                                       \
          ".p2align 4\n" #name ":\n"                                                           \
          "  movq (%rsp), %r11\n"                                                              \
          "  movq oxiomp_noted_caller@gottpoff(%rip), %r10\n"                                  \
          "  movq %r11, %fs:(%r10)\n"                                                          \
          "  jmp oxiomp_" #name "@PLT\n"                                                       \
          ".size " #name ", .-" #name "\n");

NOTED(GOMP_barrier)
NOTED(GOMP_barrier_cancel)
NOTED(GOMP_single_start)
NOTED(GOMP_single_copy_start)
NOTED(GOMP_ordered_start)
NOTED(GOMP_loop_static_start)
NOTED(GOMP_loop_dynamic_start)
NOTED(GOMP_loop_guided_start)
NOTED(GOMP_loop_nonmonotonic_dynamic_start)
NOTED(GOMP_loop_nonmonotonic_guided_start)
NOTED(GOMP_loop_ordered_static_start)
NOTED(GOMP_loop_ordered_dynamic_start)
NOTED(GOMP_loop_ordered_guided_start)
NOTED(GOMP_loop_runtime_start)
NOTED(GOMP_loop_nonmonotonic_runtime_start)
NOTED(GOMP_loop_maybe_nonmonotonic_runtime_start)
NOTED(GOMP_loop_ordered_runtime_start)
NOTED(GOMP_loop_ull_static_start)
NOTED(GOMP_loop_ull_dynamic_start)
NOTED(GOMP_loop_ull_guided_start)
NOTED(GOMP_loop_ull_nonmonotonic_dynamic_start)
NOTED(GOMP_loop_ull_nonmonotonic_guided_start)
NOTED(GOMP_loop_ull_ordered_static_start)
NOTED(GOMP_loop_ull_ordered_dynamic_start)
NOTED(GOMP_loop_ull_ordered_guided_start)
NOTED(GOMP_loop_ull_runtime_start)
NOTED(GOMP_loop_ull_nonmonotonic_runtime_start)
NOTED(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)
NOTED(GOMP_loop_ull_ordered_runtime_start)
NOTED(GOMP_loop_doacross_static_start)
NOTED(GOMP_loop_doacross_dynamic_start)
NOTED(GOMP_loop_doacross_guided_start)
NOTED(GOMP_loop_doacross_runtime_start)
NOTED(GOMP_loop_ull_doacross_static_start)
NOTED(GOMP_loop_ull_doacross_dynamic_start)
NOTED(GOMP_loop_ull_doacross_guided_start)
NOTED(GOMP_loop_ull_doacross_runtime_start)
NOTED(GOMP_loop_start)
NOTED(GOMP_loop_ordered_start)
NOTED(GOMP_loop_doacross_start)
NOTED(GOMP_loop_ull_start)
NOTED(GOMP_loop_ull_ordered_start)
NOTED(GOMP_loop_ull_doacross_start)
NOTED(GOMP_loop_end)
NOTED(GOMP_loop_end_cancel)
NOTED(GOMP_sections_start)
NOTED(GOMP_sections2_start)
NOTED(GOMP_sections_end)
NOTED(GOMP_sections_end_cancel)
NOTED(GOMP_workshare_task_reduction_unregister)
