// task_direct_entries.c - tasking entries that clang-19 does not emit (older clang, other
// compilers and device runtimes call them), called directly:
//  a. __kmpc_task_reduction_init (the older kmp_task_red_input_t, init(void *priv)) in a
//     taskgroup opened by __kmpc_taskgroup / __kmpc_end_taskgroup; tasks (and their children)
//     made by __kmpc_omp_task_alloc / __kmpc_omp_task take part through
//     __kmpc_task_reduction_get_th_data: a sum (no init: zero-filled), a max (init and fini)
//     and a lazy array (flags 1); exact results, every initialized copy finalized once; once
//     from `single`, once with every thread running its own taskgroup at the same time
//  b. __kmpc_task_reduction_modifier_init / _fini (old form), is_ws 0 on a parallel region and
//     is_ws 1 in a worksharing loop: every thread passes its own private copy; the implicit
//     tasks add directly, tasks through get_th_data; after fini the privates are summed
//     (as clang's following __kmpc_reduce_nowait does): exact total
//  c. __kmpc_omp_wait_deps: after waiting on depend(in: a) the task that wrote a (out) has
//     completed; waiting with out on c waits for all earlier readers of c
//  d. __kmpc_omp_taskwait_deps_51 with has_no_wait = 1 (taskwait depend(in: a, out: b) nowait):
//     a later task depend(in: b) runs after the earlier writer of a (through the taskwait's
//     empty task), a later depend(inout: a) task too
//  e. __kmpc_omp_target_task_alloc (device -1) submitted with __kmpc_omp_task or with deps: a
//     host task that runs once with its shareds and privates; taskwait waits for it; a task
//     depending on it sees its write
//  f. proxy tasks (flag 0x10): bodies run, completion comes from __kmpc_proxy_task_completed_ooo
//     on a pthread (in reverse order) while the creator waits in __kmpc_end_taskgroup, and from
//     __kmpc_proxy_task_completed(gtid, task) by another thread of the team (the creator itself
//     with one thread) while the creator waits in taskwait: neither returns before every
//     completion, a task depending on the proxy runs after its completion
//  g. the destructors thunk (flag 0x08, data1 = routine(gtid, task)): called exactly once per
//     task, after the body, before taskwait / taskgroup end returns; for deferred tasks, tasks
//     with dependences, if(0) tasks (begin_if0 / complete_if0) and an untied task with two parts
//     (once, after the last part)
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: cflags=-lpthread
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <limits.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "kmp_abi.h"

int32_t __kmpc_omp_task(ident_t *, int32_t, kmp_task_t *);
int32_t __kmpc_omp_taskwait(ident_t *, int32_t);
int32_t __kmpc_omp_taskyield(ident_t *, int32_t, int32_t);
void __kmpc_taskgroup(ident_t *, int32_t);
void __kmpc_end_taskgroup(ident_t *, int32_t);
void __kmpc_omp_task_begin_if0(ident_t *, int32_t, kmp_task_t *);
void __kmpc_omp_task_complete_if0(ident_t *, int32_t, kmp_task_t *);
void *__kmpc_task_reduction_init(int, int, void *);
void *__kmpc_task_reduction_get_th_data(int, void *, void *);
void *__kmpc_task_reduction_modifier_init(ident_t *, int, int, int, void *);
void __kmpc_task_reduction_modifier_fini(ident_t *, int, int);
void __kmpc_omp_wait_deps(ident_t *, int32_t, int32_t, kmp_depend_info_t *, int32_t,
                          kmp_depend_info_t *);
void __kmpc_omp_taskwait_deps_51(ident_t *, int32_t, int32_t, kmp_depend_info_t *, int32_t,
                                 kmp_depend_info_t *, int32_t);
kmp_task_t *__kmpc_omp_target_task_alloc(ident_t *, int32_t, int32_t, size_t, size_t,
                                         int32_t (*)(int32_t, kmp_task_t *), int64_t);
void __kmpc_proxy_task_completed(int32_t, kmp_task_t *);
void __kmpc_proxy_task_completed_ooo(kmp_task_t *);

static ident_t loc = {0, 2, 0, 33, ";task_direct_entries.c;main;0;0;;"};
#define GTID() __kmpc_global_thread_num(&loc)
#define DEP_IN 1
#define DEP_INOUT 3

/* the full 40-byte task header (data1 at 24: the destructors thunk), then our privates */
typedef struct {
  kmp_task_t h;
  void *data1;
  intptr_t data2;
  void *tg;     /* a reduction handle, or where a task writes what it saw */
  long v, idx;
} task_t;
_Static_assert(offsetof(task_t, data1) == 24 && offsetof(task_t, tg) == 40, "task layout");

static task_t *new_task(int32_t gtid, int32_t flags, int32_t (*f)(int32_t, kmp_task_t *),
                        void *tg, long v, long idx) {
  task_t *t = (task_t *)__kmpc_omp_task_alloc(&loc, gtid, flags, sizeof(task_t), 0, f);
  t->tg = tg, t->v = v, t->idx = idx;
  return t;
}

static void spin(int n) {
  for (volatile int i = 0; i < n; i++) {
  }
}

/* ---- a. __kmpc_task_reduction_init ---- */
typedef struct { void *shar; size_t size; void *init, *fini, *comb; uint32_t flags; } red_input_t;
_Static_assert(sizeof(red_input_t) == 48, "kmp_task_red_input_t is 48 bytes");
#define ARR 4
static atomic_long inits, finis;
static void sum_comb(void *l, void *r) { *(long *)l += *(long *)r; }
static void max_init(void *p) { *(long *)p = LONG_MIN; atomic_fetch_add(&inits, 1); }
static void max_fini(void *p) { (void)p; atomic_fetch_add(&finis, 1); }
static void max_comb(void *l, void *r) {
  if (*(long *)r > *(long *)l) *(long *)l = *(long *)r;
}
static void arr_init(void *p) { memset(p, 0, ARR * sizeof(long)); atomic_fetch_add(&inits, 1); }
static void arr_fini(void *p) { (void)p; atomic_fetch_add(&finis, 1); }
static void arr_comb(void *l, void *r) {
  for (int i = 0; i < ARR; i++) ((long *)l)[i] += ((long *)r)[i];
}
typedef struct { long sum, max, arr[ARR]; } red_items;

static int32_t red_leaf(int32_t gtid, kmp_task_t *kt) {
  task_t *t = (task_t *)kt;
  red_items *it = (red_items *)t->idx; /* the shared items */
  *(long *)__kmpc_task_reduction_get_th_data(gtid, t->tg, &it->sum) += t->v;
  long *m = __kmpc_task_reduction_get_th_data(gtid, t->tg, &it->max);
  if (t->v > *m) *m = t->v;
  ((long *)__kmpc_task_reduction_get_th_data(gtid, t->tg, it->arr))[t->v % ARR] += 1;
  return 0;
}
/* a task that takes part and makes one child that takes part too (v + 1000000) */
static int32_t red_task(int32_t gtid, kmp_task_t *kt) {
  task_t *t = (task_t *)kt;
  red_leaf(gtid, kt);
  __kmpc_omp_task(&loc, gtid, &new_task(gtid, 1, red_leaf, t->tg, t->v + 1000000, t->idx)->h);
  return 0;
}

/* one taskgroup with NR tasks (2 * NR contributions) into *it */
#define NR 300
static void red_group(int32_t gtid, red_items *it) {
  __kmpc_taskgroup(&loc, gtid);
  red_input_t in[3] = {
      {&it->sum, sizeof(long), NULL, NULL, (void *)sum_comb, 0},
      {&it->max, sizeof(long), (void *)max_init, (void *)max_fini, (void *)max_comb, 0},
      {it->arr, sizeof it->arr, (void *)arr_init, (void *)arr_fini, (void *)arr_comb, 1},
  };
  void *tg = __kmpc_task_reduction_init(gtid, 3, in);
  for (long i = 0; i < NR; i++)
    __kmpc_omp_task(&loc, gtid, &new_task(gtid, 1, red_task, tg, i, (long)it)->h);
  __kmpc_end_taskgroup(&loc, gtid);
}
static void red_check(const char *what, red_items *it) {
  char m[128];
  long sum = 7 + NR * (NR - 1L) + NR * 1000000L; /* 7: the item's value before */
  snprintf(m, sizeof m, "a. %s: sum", what);
  CHECK_EQ(m, it->sum, sum);
  snprintf(m, sizeof m, "a. %s: max", what);
  CHECK_EQ(m, it->max, NR - 1 + 1000000L);
  for (int k = 0; k < ARR; k++) {
    long n = 0;
    for (long i = 0; i < NR; i++) n += (i % ARR == k) + ((i + 1000000) % ARR == k);
    snprintf(m, sizeof m, "a. %s: arr[%d]", what, k);
    CHECK_EQ(m, it->arr[k], n + 1);
  }
}
static void red_reset(red_items *it) {
  it->sum = 7, it->max = -5;
  for (int k = 0; k < ARR; k++) it->arr[k] = 1;
}

/* ---- b. modifier init / fini ---- */
static int32_t mod_task(int32_t gtid, kmp_task_t *kt) {
  task_t *t = (task_t *)kt;
  *(long *)__kmpc_task_reduction_get_th_data(gtid, t->tg, (void *)t->idx) += t->v;
  return 0;
}

/* ---- c, d, e: dependences and target tasks ---- */
static int a_obj, b_obj, c_obj;
static atomic_int a_done, readers_done, seen_c, seen_d, tgt_runs[8];
static long tgt_sum;
static int32_t writer_a(int32_t gtid, kmp_task_t *kt) {
  spin(2000000);
  atomic_store(&a_done, 1);
  return 0;
}
static int32_t reader_c(int32_t gtid, kmp_task_t *kt) {
  spin(300000);
  atomic_fetch_add(&readers_done, 1);
  return 0;
}
static int32_t see_a(int32_t gtid, kmp_task_t *kt) {
  atomic_store((atomic_int *)((task_t *)kt)->tg, atomic_load(&a_done));
  return 0;
}
static int32_t tgt_body(int32_t gtid, kmp_task_t *kt) {
  task_t *t = (task_t *)kt;
  long *sum = *(long **)kt->shareds;
  __atomic_fetch_add(sum, t->v, __ATOMIC_RELAXED);
  atomic_fetch_add(&tgt_runs[t->idx], 1);
  return 0;
}
static int32_t see_tgt(int32_t gtid, kmp_task_t *kt) {
  atomic_store((atomic_int *)((task_t *)kt)->tg, atomic_load(&tgt_runs[7]));
  return 0;
}
/* submits t with one dependence on addr, or none when addr is NULL */
static void submit_deps(int32_t gtid, task_t *t, void *addr, int flags) {
  kmp_depend_info_t d = {(intptr_t)addr, sizeof(int), (uint8_t)flags};
  if (addr)
    __kmpc_omp_task_with_deps(&loc, gtid, &t->h, 1, &d, 0, NULL);
  else
    __kmpc_omp_task(&loc, gtid, &t->h);
}

/* ---- f. proxy tasks ---- */
#define NP 4
static kmp_task_t *_Atomic proxies[NP];
static atomic_int proxy_bodies, proxy_completed[NP], dep_saw;
static int32_t proxy_body(int32_t gtid, kmp_task_t *kt) {
  atomic_store(&proxies[((task_t *)kt)->idx], kt);
  atomic_fetch_add(&proxy_bodies, 1);
  return 0;
}
static void *complete_all_ooo(void *arg) {
  while (atomic_load(&proxy_bodies) < NP) usleep(1000);
  for (int i = NP - 1; i >= 0; i--) {
    usleep(2000); /* let the bodies return: libomp reads a proxy task right after its body */
    atomic_store(&proxy_completed[i], 1);
    __kmpc_proxy_task_completed_ooo(atomic_load(&proxies[i]));
  }
  return NULL;
}
static int32_t proxy_dependant(int32_t gtid, kmp_task_t *kt) {
  atomic_store(&dep_saw, atomic_load(&proxy_completed[0]));
  return 0;
}

/* ---- g. destructors ---- */
#define ND 64
static atomic_int body_done[ND + 2], dtor_runs[ND + 2], dtor_early, untied_parts;
static int32_t dt_body(int32_t gtid, kmp_task_t *kt) {
  atomic_store(&body_done[((task_t *)kt)->idx], 1);
  return 0;
}
static int32_t dt_dtor(int32_t gtid, kmp_task_t *kt) {
  long i = ((task_t *)kt)->idx;
  if (!atomic_load(&body_done[i])) atomic_fetch_add(&dtor_early, 1);
  atomic_fetch_add(&dtor_runs[i], 1);
  return 0;
}
static int32_t dt_untied(int32_t gtid, kmp_task_t *kt) {
  atomic_fetch_add(&untied_parts, 1);
  if (kt->part_id == 0) {
    kt->part_id = 1;
    __kmpc_omp_task(&loc, gtid, kt); /* clang's untied re-enqueue at a scheduling point */
    return 0;
  }
  return dt_body(gtid, kt);
}
static task_t *dt_task(int32_t gtid, int32_t flags, int32_t (*f)(int32_t, kmp_task_t *), long i) {
  task_t *t = new_task(gtid, flags, f, NULL, 0, i);
  t->data1 = (void *)dt_dtor;
  return t;
}

int main(void) {
  /* a. */
  static red_items one, per[64];
  red_reset(&one);
  atomic_store(&inits, 0), atomic_store(&finis, 0);
#pragma omp parallel
#pragma omp single
  red_group(GTID(), &one);
  red_check("single", &one);
  CHECK_EQ("a. copies initialized == copies finalized", atomic_load(&finis), atomic_load(&inits));
  int nth = 1;
#pragma omp parallel
  {
#pragma omp single
    nth = omp_get_num_threads();
    int tid = omp_get_thread_num();
    if (tid < 64) {
      red_reset(&per[tid]);
      red_group(GTID(), &per[tid]);
    }
  }
  for (int i = 0; i < nth && i < 64; i++) red_check("per thread", &per[i]);
  CHECK_EQ("a. copies initialized == copies finalized (2)", atomic_load(&finis),
           atomic_load(&inits));

  /* b. */
  for (int is_ws = 0; is_ws < 2; is_ws++) {
    long total = 0, expect = 0;
#pragma omp parallel reduction(+ : expect)
    {
      int32_t gtid = GTID();
      long priv = 0;
      red_input_t in = {&priv, sizeof priv, NULL, NULL, (void *)sum_comb, 0};
      void *tg = __kmpc_task_reduction_modifier_init(&loc, gtid, is_ws, 1, &in);
      long me = omp_get_thread_num() + 1;
      priv += me; /* the implicit task's own part */
      expect += me;
      if (is_ws) {
#pragma omp for schedule(dynamic, 3) nowait
        for (long i = 0; i < 500; i++) {
          __kmpc_omp_task(&loc, gtid, &new_task(gtid, 1, mod_task, tg, i * 3, (long)&priv)->h);
          expect += i * 3;
        }
      } else {
        for (long i = 0; i < 100; i++) {
          __kmpc_omp_task(&loc, gtid, &new_task(gtid, 1, mod_task, tg, me * i, (long)&priv)->h);
          expect += me * i;
        }
      }
      __kmpc_task_reduction_modifier_fini(&loc, gtid, is_ws);
      __atomic_fetch_add(&total, priv, __ATOMIC_RELAXED);
    }
    CHECK_EQ(is_ws ? "b. modifier (is_ws 1): total" : "b. modifier (is_ws 0): total", total,
             expect);
  }

  /* c, d, e. */
  for (int rep = 0; rep < 10; rep++) {
    atomic_store(&a_done, 0), atomic_store(&readers_done, 0);
    atomic_store(&seen_c, -1), atomic_store(&seen_d, -1);
    int after_wait_a = -1, after_wait_c = -1;
    tgt_sum = 0;
    for (int i = 0; i < 8; i++) atomic_store(&tgt_runs[i], 0);
    static atomic_int tgt_seen;
    atomic_store(&tgt_seen, -1);
#pragma omp parallel
#pragma omp single
    {
      int32_t gtid = GTID();
      /* c. */
      submit_deps(gtid, new_task(gtid, 1, writer_a, NULL, 0, 0), &a_obj, DEP_INOUT);
      for (int i = 0; i < 3; i++)
        submit_deps(gtid, new_task(gtid, 1, reader_c, NULL, 0, 0), &c_obj, DEP_IN);
      kmp_depend_info_t wa = {(intptr_t)&a_obj, sizeof(int), DEP_IN};
      __kmpc_omp_wait_deps(&loc, gtid, 1, &wa, 0, NULL);
      after_wait_a = atomic_load(&a_done);
      kmp_depend_info_t wc = {(intptr_t)&c_obj, sizeof(int), DEP_INOUT};
      __kmpc_omp_wait_deps(&loc, gtid, 1, &wc, 0, NULL);
      after_wait_c = atomic_load(&readers_done);
      __kmpc_omp_taskwait(&loc, gtid);
      /* d. */
      atomic_store(&a_done, 0);
      submit_deps(gtid, new_task(gtid, 1, writer_a, NULL, 0, 0), &a_obj, DEP_INOUT);
      kmp_depend_info_t tw[2] = {{(intptr_t)&a_obj, sizeof(int), DEP_IN},
                                 {(intptr_t)&b_obj, sizeof(int), DEP_INOUT}};
      __kmpc_omp_taskwait_deps_51(&loc, gtid, 2, tw, 0, NULL, 1);
      submit_deps(gtid, new_task(gtid, 1, see_a, (void *)&seen_c, 0, 0), &b_obj, DEP_IN);
      submit_deps(gtid, new_task(gtid, 1, see_a, (void *)&seen_d, 0, 0), &a_obj, DEP_INOUT);
      __kmpc_omp_taskwait(&loc, gtid);
      /* e. */
      long *sum = &tgt_sum;
      for (int i = 0; i < 8; i++) {
        task_t *t = (task_t *)__kmpc_omp_target_task_alloc(&loc, gtid, 1, sizeof(task_t),
                                                           sizeof(long *), tgt_body, -1);
        memcpy(t->h.shareds, &sum, sizeof sum);
        t->v = 1L << i, t->idx = i;
        submit_deps(gtid, t, i == 7 ? &a_obj : NULL, DEP_INOUT);
      }
      /* a host task after the target task writing a: sees its sum */
      submit_deps(gtid, new_task(gtid, 1, see_tgt, (void *)&tgt_seen, 0, 0), &a_obj, DEP_IN);
      __kmpc_omp_taskwait(&loc, gtid);
    }
    CHECK_EQ("c. wait_deps(in: a): the writer of a completed", after_wait_a, 1);
    CHECK_EQ("c. wait_deps(out: c): every earlier reader of c completed", after_wait_c, 3);
    CHECK_EQ("d. task depend(in: b) after taskwait depend(in: a, out: b) nowait saw a's writer",
             atomic_load(&seen_c), 1);
    CHECK_EQ("d. task depend(inout: a) after it saw a's writer", atomic_load(&seen_d), 1);
    CHECK_EQ("e. target tasks: sum after taskwait", tgt_sum, 255);
    for (int i = 0; i < 8; i++) CHECK_EQ("e. target task ran once", atomic_load(&tgt_runs[i]), 1);
    CHECK_EQ("e. a task depending on a target task ran after it", atomic_load(&tgt_seen), 1);
  }

  /* f. proxies: _ooo from a pthread, creator waits in a taskgroup; a dependant */
  for (int rep = 0; rep < 5; rep++) {
    atomic_store(&proxy_bodies, 0), atomic_store(&dep_saw, -1);
    for (int i = 0; i < NP; i++) atomic_store(&proxy_completed[i], 0), atomic_store(&proxies[i], NULL);
    int seen_at_end[NP];
    pthread_t completer;
    pthread_create(&completer, NULL, complete_all_ooo, NULL);
#pragma omp parallel
#pragma omp single
    {
      int32_t gtid = GTID();
      __kmpc_taskgroup(&loc, gtid);
      for (long i = 0; i < NP; i++) {
        task_t *p = new_task(gtid, 0x11, proxy_body, NULL, 0, i);
        submit_deps(gtid, p, i == 0 ? &b_obj : NULL, DEP_INOUT);
      }
      submit_deps(gtid, new_task(gtid, 1, proxy_dependant, NULL, 0, 0), &b_obj, DEP_IN);
      __kmpc_end_taskgroup(&loc, gtid);
      for (int i = 0; i < NP; i++) seen_at_end[i] = atomic_load(&proxy_completed[i]);
    }
    pthread_join(completer, NULL);
    for (int i = 0; i < NP; i++)
      CHECK_EQ("f. taskgroup end returned after the proxy's _ooo completion", seen_at_end[i], 1);
    CHECK_EQ("f. proxy bodies ran once each", atomic_load(&proxy_bodies), NP);
    CHECK_EQ("f. the proxy's dependant ran after its completion", atomic_load(&dep_saw), 1);
  }
  /* f. __kmpc_proxy_task_completed(gtid, task) from a team thread; creator in taskwait */
  for (int rep = 0; rep < 5; rep++) {
    atomic_store(&proxy_bodies, 0), atomic_store(&dep_saw, -1);
    atomic_store(&proxy_completed[0], 0), atomic_store(&proxies[0], NULL);
    int seen_after_wait = -1;
#pragma omp parallel
    {
      int32_t gtid = GTID();
      int tid = omp_get_thread_num(), completer = omp_get_num_threads() > 1 ? 1 : 0;
      if (tid == 0) {
        submit_deps(gtid, new_task(gtid, 0x11, proxy_body, NULL, 0, 0), &c_obj, DEP_INOUT);
        submit_deps(gtid, new_task(gtid, 1, proxy_dependant, NULL, 0, 0), &c_obj, DEP_IN);
      }
      if (tid == completer) {
        while (!atomic_load(&proxy_bodies)) {
          if (tid == 0)
            __kmpc_omp_taskyield(&loc, gtid, 0);
          else
            sched_yield();
        }
        usleep(1000); /* let the body return (as in complete_all_ooo) */
        atomic_store(&proxy_completed[0], 1);
        __kmpc_proxy_task_completed(gtid, atomic_load(&proxies[0]));
      }
      if (tid == 0) {
        __kmpc_omp_taskwait(&loc, gtid);
        seen_after_wait = atomic_load(&proxy_completed[0]);
      }
    }
    CHECK_EQ("f. taskwait returned after __kmpc_proxy_task_completed", seen_after_wait, 1);
    CHECK_EQ("f. the proxy body ran once", atomic_load(&proxy_bodies), 1);
    CHECK_EQ("f. the proxy's dependant ran after its completion", atomic_load(&dep_saw), 1);
  }

  /* g. destructors thunk */
  for (int rep = 0; rep < 5; rep++) {
    for (int i = 0; i < ND + 2; i++) atomic_store(&body_done[i], 0), atomic_store(&dtor_runs[i], 0);
    atomic_store(&untied_parts, 0);
    int if0_dtor_at_complete = -1, group_dtors = -1, wait_dtors = -1;
#pragma omp parallel
#pragma omp single
    {
      int32_t gtid = GTID();
      for (long i = 0; i < ND / 2; i++) {
        task_t *t = dt_task(gtid, 0x9, dt_body, i);
        submit_deps(gtid, t, i % 4 == 1 ? &a_obj : NULL, DEP_INOUT);
      }
      task_t *u = dt_task(gtid, 0x8, dt_untied, ND + 1); /* untied: tied bit clear */
      __kmpc_omp_task(&loc, gtid, &u->h);
      /* an if(0) task, as clang runs it */
      task_t *z = dt_task(gtid, 0x9, dt_body, ND);
      __kmpc_omp_task_begin_if0(&loc, gtid, &z->h);
      dt_body(gtid, &z->h);
      __kmpc_omp_task_complete_if0(&loc, gtid, &z->h);
      if0_dtor_at_complete = atomic_load(&dtor_runs[ND]);
      __kmpc_omp_taskwait(&loc, gtid);
      wait_dtors = 0;
      for (int i = 0; i < ND / 2; i++) wait_dtors += atomic_load(&dtor_runs[i]);
      wait_dtors += atomic_load(&dtor_runs[ND + 1]);
      __kmpc_taskgroup(&loc, gtid);
      for (long i = ND / 2; i < ND; i++) __kmpc_omp_task(&loc, gtid, &dt_task(gtid, 0x9, dt_body, i)->h);
      __kmpc_end_taskgroup(&loc, gtid);
      group_dtors = 0;
      for (int i = ND / 2; i < ND; i++) group_dtors += atomic_load(&dtor_runs[i]);
    }
    CHECK_EQ("g. if(0) task: destructors ran by the end of complete_if0", if0_dtor_at_complete, 1);
    CHECK_EQ("g. destructors of the deferred tasks (and the untied one) ran before taskwait returned",
             wait_dtors, ND / 2 + 1);
    CHECK_EQ("g. destructors ran before the taskgroup's end returned", group_dtors, ND / 2);
    for (int i = 0; i < ND + 2; i++) CHECK_EQ("g. destructors ran exactly once", atomic_load(&dtor_runs[i]), 1);
    CHECK_EQ("g. destructors that ran before the body had finished", atomic_load(&dtor_early), 0);
    CHECK_EQ("g. the untied task's parts", atomic_load(&untied_parts), 2);
  }
  return failures != 0;
}
