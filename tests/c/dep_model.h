// dep_model.h - the sequential semantics of task dependences, per parent and address, that the
// random task-graph tests (task_stress.c, task_stress_kinds.c) check a runtime against: the
// current group of sibling accesses (several for in / inoutset / mutexinoutset, one for out /
// inout) and the group before it; and the random choice of a new sibling's dependences. Define
// MAXKIDS (the most siblings one parent makes) and NADDR (the addresses) first.
#ifndef OXIOMP_TEST_DEP_MODEL_H
#define OXIOMP_TEST_DEP_MODEL_H
#include <stdint.h>
#include <string.h>

/* xorshift, deterministic per seed */
static uint64_t rng_next(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}
static int rnd(uint64_t *s, int n) { return (int)(rng_next(s) % (uint64_t)n); }

enum { K_IN, K_OUT, K_INOUT, K_MTX, K_SET, NKINDS };

struct hist {
  int kind; /* of the current group, -1: none yet */
  int ncur, nprev;
  int cur[MAXKIDS + 1], prev[MAXKIDS + 1];
};

static int is_set_kind(int k) { return k == K_IN || k == K_MTX || k == K_SET; }

/* adds to preds[] the tasks an access of kind k must wait for, then (record) records the access */
static int hist_access(struct hist *h, int k, int id, int *preds, int np, int record) {
  if (k == K_OUT) k = K_INOUT;
  if (is_set_kind(k) && h->kind == k) {
    for (int i = 0; i < h->nprev; i++) preds[np++] = h->prev[i];
    if (record) h->cur[h->ncur++] = id;
  } else {
    for (int i = 0; i < h->ncur; i++) preds[np++] = h->cur[i];
    if (record) {
      memcpy(h->prev, h->cur, sizeof(int) * (size_t)h->ncur);
      h->nprev = h->ncur;
      h->cur[0] = id;
      h->ncur = 1;
      h->kind = k;
    }
  }
  return np;
}

/* The dependences of new sibling `id`: ndeps distinct addresses, each with a kind (each address
   has a favoured kind that drifts, so groups form; mutexinoutset only with allow_mtx, else
   inoutset), into addr[] and kind[]; the siblings it must wait for are added to preds[] (np
   so far), and it is recorded in the model h[]. Returns the new np. */
static int pick_deps(uint64_t *s, int ndeps, int *fav, int allow_mtx, struct hist *h, int id, int *addr,
                     int *kind, int *preds, int np) {
  for (int d = 0; d < ndeps; d++) {
    int a, dup;
    do {
      a = rnd(s, NADDR);
      dup = 0;
      for (int e = 0; e < d; e++) dup |= addr[e] == a;
    } while (dup);
    if (rnd(s, 4) == 0) fav[a] = rnd(s, NKINDS);
    int k = rnd(s, 10) < 7 ? fav[a] : rnd(s, NKINDS);
    if (k == K_MTX && !allow_mtx) k = K_SET;
    addr[d] = a;
    kind[d] = k;
    np = hist_access(&h[a], k, id, preds, np, 1);
  }
  return np;
}
#endif
