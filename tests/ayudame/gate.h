/* Holds tasks until their creator has created all their successors, so that no predecessor
 * completes before its successors exist: the runtime then adds (and tells) every edge the
 * depend clauses make. A team of one runs each task at once, so there a gate is open from
 * the start. */
#include <omp.h>
#include <sched.h>

static void gate_init(int *gate) { __atomic_store_n(gate, omp_get_num_threads() == 1, __ATOMIC_SEQ_CST); }
static void gate_release(int *gate) { __atomic_store_n(gate, 1, __ATOMIC_SEQ_CST); }
static void gate_wait(int *gate) {
  while (!__atomic_load_n(gate, __ATOMIC_SEQ_CST))
    sched_yield();
}
