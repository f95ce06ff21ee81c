// task_depnode_api.c - libomp's dependence-graph inquiry, __kmpc_task_get_depnode and
// __kmpc_task_get_successors, on a graph held still: task A (out x) waits for a flag, so no
// task after it can start until the checks are done.
//  * B and C (inoutset x) follow A: A's successors are exactly B's and C's nodes;
//  * D and E (in x) follow the group {B, C}, a group of another kind: B's successors and C's
//    are exactly D and E (the engine's join node between the groups does not show);
//  * F (out x) follows D and E: each has exactly F as successor; F has none;
//  * a node is the same pointer on every call; the tasks then run, each after its
//    predecessors (the order is recorded and checked).
// oxiomp-test: threads=2,4
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>

#include "check.h"
#include "kmp_abi.h"

typedef struct depnode_list depnode_list_t;
typedef struct depnode { depnode_list_t *successors; } depnode_t;
struct depnode_list { depnode_t *node; depnode_list_t *next; };
depnode_t *__kmpc_task_get_depnode(kmp_task_t *);
depnode_list_t *__kmpc_task_get_successors(kmp_task_t *);

static ident_t loc = {0, 2, 0, 0, ";task_depnode_api.c;main;1;1;;"};
static int x, go, seq, order[6];

static int32_t body(int32_t gtid, kmp_task_t *t) {
  (void)gtid;
  int id = (int)(intptr_t)t->shareds;
  if (id == 0)
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {
    }
  order[id] = __atomic_fetch_add(&seq, 1, __ATOMIC_SEQ_CST);
  return 0;
}

static kmp_task_t *submit(int id, uint8_t flags) {
  int32_t gtid = __kmpc_global_thread_num(&loc);
  kmp_task_t *t = __kmpc_omp_task_alloc(&loc, gtid, 1, sizeof(kmp_task_t), 0, body);
  t->shareds = (void *)(intptr_t)id;
  kmp_depend_info_t d = {(intptr_t)&x, sizeof x, flags};
  __kmpc_omp_task_with_deps(&loc, gtid, t, 1, &d, 0, NULL);
  return t;
}

// Whether the list holds exactly the nodes `a` and `b` (b null: only a), in any order.
static int list_is(depnode_list_t *l, depnode_t *a, depnode_t *b) {
  int n = 0, seen_a = 0, seen_b = 0;
  for (; l; l = l->next, n++) {
    if (l->node == a) seen_a++;
    else if (b && l->node == b) seen_b++;
    else return 0;
  }
  return b ? (n == 2 && seen_a == 1 && seen_b == 1) : (n == 1 && seen_a == 1);
}

int main(void) {
  int team = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
  {
    team = omp_get_num_threads();
    if (team == 2) {
      kmp_task_t *a = submit(0, 2), *b = submit(1, 8), *c = submit(2, 8);
      kmp_task_t *d = submit(3, 1), *e = submit(4, 1), *f = submit(5, 2);
      depnode_t *nb = __kmpc_task_get_depnode(b), *nc = __kmpc_task_get_depnode(c);
      depnode_t *nd = __kmpc_task_get_depnode(d), *ne = __kmpc_task_get_depnode(e);
      depnode_t *nf = __kmpc_task_get_depnode(f);
      CHECK(("a node is the same pointer on every call"), __kmpc_task_get_depnode(b) == nb);
      CHECK(("nodes of different tasks differ"), nb != nc && nd != ne && nb != nf);
      CHECK(("A's successors are B and C"), list_is(__kmpc_task_get_successors(a), nb, nc));
      CHECK(("B's successors are D and E"), list_is(__kmpc_task_get_successors(b), nd, ne));
      CHECK(("C's successors are D and E"), list_is(__kmpc_task_get_successors(c), nd, ne));
      CHECK(("D's successor is F"), list_is(__kmpc_task_get_successors(d), nf, NULL));
      CHECK(("E's successor is F"), list_is(__kmpc_task_get_successors(e), nf, NULL));
      CHECK(("F has no successor"), __kmpc_task_get_successors(f) == NULL);
      CHECK(("the node's first field is the last successor list"), nb->successors != NULL);
      __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
    }
  }
  if (team == 2) {
    CHECK(("A ran first"), order[0] == 0);
    CHECK(("B and C ran before D and E"), order[1] < order[3] && order[1] < order[4] &&
                                               order[2] < order[3] && order[2] < order[4]);
    CHECK(("F ran last"), order[5] == 5);
  }
  return failures != 0;
}
