// task_detach.c - detachable tasks (detach(ev): task flag 0x40,
// __kmpc_task_allow_completion_event, omp_fulfill_event):
//  * the event is fulfilled by another task (also by a child task of the
//    detached task, and by a task created before the dependant); taskwait
//    waits for the fulfilment
//  * by a different OpenMP thread of the team (the creating thread publishes
//    the handle and goes on to a taskwait / explicit barrier / the region's
//    end; with 1 thread the same thread fulfils)
//  * by a separate pthread created by the program (not an OpenMP thread),
//    after a short sleep: created by the encountering task, or by the
//    detached task's own body; while the team waits in taskwait, taskgroup,
//    an explicit barrier or the region-end barrier
//  * dependants (depend(out) on the detached task -> depend(in)) start only
//    after the fulfilment: `fulfilled` is set right before omp_fulfill_event
//    and the dependant must see it; every dependant runs exactly once
//  * taskwait, taskgroup, the explicit barrier and the region-end barrier
//    all wait for the fulfilment (`fulfilled` is 1 right after them)
//  * fulfilment inside the detached task's own body (before the body ends):
//    the task completes when its body ends, its dependant sees the body's last
//    store; also with a pthread fulfilling while the body still runs
//  * a chain of detached tasks (inout on one variable), each fulfilled by a
//    pthread in reverse order; 32 detached tasks fulfilled by one pthread
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: cflags=-lpthread
// oxiomp-test: gcc-reference=skip
// (libgomp crashes or hangs on this program.)
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static int fulfilled; /* set right before omp_fulfill_event */
static int dep_saw;   /* `fulfilled` as the dependant saw it */
static int dep_runs;  /* executions of the dependant */
static int body_done; /* the detached task's body has ended (or reached its end) */
static int dep_saw_body;
static int x; /* dependence object */

static void reset(void) {
  __atomic_store_n(&fulfilled, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&dep_saw, -1, __ATOMIC_SEQ_CST);
  __atomic_store_n(&dep_runs, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&body_done, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&dep_saw_body, -1, __ATOMIC_SEQ_CST);
}

static void fulfil(omp_event_handle_t ev) {
  __atomic_store_n(&fulfilled, 1, __ATOMIC_SEQ_CST);
  omp_fulfill_event(ev);
}

static void sleep_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

/* the dependant of the detached task */
static void dependant(void) {
  __atomic_store_n(&dep_saw, __atomic_load_n(&fulfilled, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
  __atomic_store_n(&dep_saw_body, __atomic_load_n(&body_done, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
  __atomic_fetch_add(&dep_runs, 1, __ATOMIC_SEQ_CST);
}

static void check_dep(const char *what) {
  char buf[200];
  snprintf(buf, sizeof buf, "%s: dependant ran", what);
  CHECK_EQ(buf, __atomic_load_n(&dep_runs, __ATOMIC_SEQ_CST), 1);
  snprintf(buf, sizeof buf, "%s: dependant started before the fulfilment", what);
  CHECK_EQ(buf, __atomic_load_n(&dep_saw, __ATOMIC_SEQ_CST), 1);
  snprintf(buf, sizeof buf, "%s: dependant started before the detached body ended", what);
  CHECK_EQ(buf, __atomic_load_n(&dep_saw_body, __ATOMIC_SEQ_CST), 1);
}

/* ---------- a pthread that fulfils after a sleep ---------- */
typedef struct {
  omp_event_handle_t ev;
  long delay_us;
} fulfiller_arg;

static void *fulfiller_main(void *p) {
  fulfiller_arg *a = p;
  sleep_us(a->delay_us);
  fulfil(a->ev);
  free(a);
  return NULL;
}

static pthread_t start_fulfiller(omp_event_handle_t ev, long delay_us) {
  fulfiller_arg *a = malloc(sizeof *a);
  a->ev = ev;
  a->delay_us = delay_us;
  pthread_t th;
  if (pthread_create(&th, NULL, fulfiller_main, a) != 0) {
    fail_int("pthread_create", 1, 0);
    exit(2);
  }
  return th;
}

/* ---------- fulfilled by another task (caller is in a single) ---------- */
static void test_by_task(int variant) {
  omp_event_handle_t ev = (omp_event_handle_t)0;
  reset();
  if (variant == 0) {
    /* detached, dependant, then the fulfilling task */
#pragma omp task detach(ev) depend(out: x)
    __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
#pragma omp task depend(in: x)
    dependant();
#pragma omp task firstprivate(ev)
    fulfil(ev);
#pragma omp taskwait
  } else if (variant == 1) {
    /* the fulfilling task is created before the dependant */
#pragma omp task detach(ev) depend(out: x)
    __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
#pragma omp task firstprivate(ev)
    fulfil(ev);
#pragma omp task depend(in: x)
    dependant();
#pragma omp taskwait
  } else {
    /* a child task of the detached task fulfils its parent's event */
#pragma omp task detach(ev) depend(out: x)
    {
#pragma omp task firstprivate(ev)
      fulfil(ev);
      __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
    }
#pragma omp task depend(in: x)
    dependant();
#pragma omp taskwait
  }
  CHECK_EQ("fulfilled by a task: taskwait returned before the fulfilment", fulfilled, 1);
  check_dep(variant == 0 ? "fulfilled by a task" : variant == 1 ? "fulfilled by an earlier task" : "fulfilled by a child task");
}

/* ---------- fulfilled by another OpenMP thread ---------- */
static omp_event_handle_t shared_ev;
static int published;

static void test_by_thread(int wait_kind) {
  reset();
  __atomic_store_n(&published, 0, __ATOMIC_SEQ_CST);
  int fulfiller_tid = -1, creator_after = -1;
#pragma omp parallel shared(fulfiller_tid, creator_after)
  {
    int me = omp_get_thread_num(), nth = omp_get_num_threads();
    if (me == 0) {
      omp_event_handle_t ev = (omp_event_handle_t)0;
#pragma omp task detach(ev) depend(out: x)
      __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
#pragma omp task depend(in: x)
      dependant();
      shared_ev = ev;
      __atomic_store_n(&published, 1, __ATOMIC_SEQ_CST);
      if (nth == 1) {
        fulfiller_tid = me;
        fulfil(ev);
      }
      if (wait_kind == 0) {
#pragma omp taskwait
        creator_after = __atomic_load_n(&fulfilled, __ATOMIC_SEQ_CST);
      }
    } else if (me == nth - 1) {
      /* thread 0 publishes without waiting for anything */
      while (!__atomic_load_n(&published, __ATOMIC_SEQ_CST)) sched_yield();
      fulfiller_tid = me;
      fulfil(shared_ev);
    }
    if (wait_kind == 1) {
#pragma omp barrier
      if (__atomic_load_n(&fulfilled, __ATOMIC_SEQ_CST) != 1)
        fail_int("fulfilled by a thread: explicit barrier did not wait", 0, 1);
      if (__atomic_load_n(&dep_runs, __ATOMIC_SEQ_CST) != 1)
        fail_int("fulfilled by a thread: dependant not run at the barrier", dep_runs, 1);
    }
    /* wait_kind 2: only the region-end barrier */
  }
  if (wait_kind == 0) CHECK_EQ("fulfilled by another thread: taskwait did not wait", creator_after, 1);
  CHECK("fulfilled by another thread: fulfiller", fulfiller_tid >= 0);
  CHECK_EQ("fulfilled by another thread: region end", fulfilled, 1);
  check_dep("fulfilled by another thread");
}

/* ---------- fulfilled by a pthread of the program ---------- */
/* wait_kind: 0 taskwait, 1 taskgroup; the caller is in a single */
static void test_by_pthread(int wait_kind, int from_body) {
  omp_event_handle_t ev = (omp_event_handle_t)0;
  pthread_t th;
  static pthread_t body_th;
  reset();
  if (wait_kind == 0) {
    if (from_body) {
#pragma omp task detach(ev) depend(out: x)
      {
        body_th = start_fulfiller(ev, 1000);
        __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
      }
#pragma omp task depend(in: x)
      dependant();
#pragma omp taskwait
      th = body_th;
    } else {
#pragma omp task detach(ev) depend(out: x)
      __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
#pragma omp task depend(in: x)
      dependant();
      th = start_fulfiller(ev, 1000);
#pragma omp taskwait
    }
  } else {
#pragma omp taskgroup
    {
      if (from_body) {
#pragma omp task detach(ev) depend(out: x)
        {
          body_th = start_fulfiller(ev, 1000);
          __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
        }
#pragma omp task depend(in: x)
        dependant();
      } else {
#pragma omp task detach(ev) depend(out: x)
        __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
#pragma omp task depend(in: x)
        dependant();
        body_th = start_fulfiller(ev, 1000);
      }
    }
    th = body_th;
  }
  CHECK_EQ(wait_kind == 0 ? "fulfilled by a pthread: taskwait did not wait" : "fulfilled by a pthread: taskgroup did not wait",
           __atomic_load_n(&fulfilled, __ATOMIC_SEQ_CST), 1);
  check_dep(from_body ? "pthread started by the detached body" : "pthread started by the creator");
  pthread_join(th, NULL);
}

/* the team waits in a barrier (explicit, or the region's end) */
static void test_pthread_barrier(int explicit_barrier) {
  static pthread_t th;
  reset();
#pragma omp parallel
  {
#pragma omp single nowait
    {
      omp_event_handle_t ev = (omp_event_handle_t)0;
#pragma omp task detach(ev) depend(out: x)
      __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
#pragma omp task depend(in: x)
      dependant();
      th = start_fulfiller(ev, 2000);
    }
    if (explicit_barrier) {
#pragma omp barrier
      if (__atomic_load_n(&fulfilled, __ATOMIC_SEQ_CST) != 1) fail_int("pthread fulfil: explicit barrier did not wait", 0, 1);
      if (__atomic_load_n(&dep_runs, __ATOMIC_SEQ_CST) != 1) fail_int("pthread fulfil: dependant not run at the barrier", dep_runs, 1);
    }
  }
  CHECK_EQ(explicit_barrier ? "pthread fulfil + barrier" : "pthread fulfil: region-end barrier did not wait", fulfilled, 1);
  check_dep(explicit_barrier ? "pthread fulfil + barrier" : "pthread fulfil + region end");
  pthread_join(th, NULL);
}

/* ---------- fulfilled inside the detached task's own body ---------- */
static void test_in_body(int with_pthread) {
  omp_event_handle_t ev = (omp_event_handle_t)0;
  reset();
  if (!with_pthread) {
#pragma omp task detach(ev) depend(out: x)
    {
      fulfil(ev);
      /* the task is not complete yet: its body is still running */
      sleep_us(50);
      __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
    }
  } else {
#pragma omp task detach(ev) depend(out: x)
    {
      pthread_t th = start_fulfiller(ev, 200);
      pthread_join(th, NULL); /* fulfilled while the body runs */
      sleep_us(50);
      __atomic_store_n(&body_done, 1, __ATOMIC_SEQ_CST);
    }
  }
#pragma omp task depend(in: x)
  dependant();
#pragma omp taskwait
  check_dep(with_pthread ? "fulfilled by a pthread while the body runs" : "fulfilled in the own body");
}

/* ---------- a chain of detached tasks, fulfilled in reverse order ---------- */
#define CHAIN 8
static int chain_fulfilled[CHAIN];
static int chain_saw[CHAIN];
static int chain_order_bad;

typedef struct {
  omp_event_handle_t ev[CHAIN];
} chain_arg;

static void *chain_fulfiller(void *p) {
  chain_arg *a = p;
  sleep_us(500);
  for (int k = CHAIN - 1; k >= 0; k--) {
    __atomic_store_n(&chain_fulfilled[k], 1, __ATOMIC_SEQ_CST);
    omp_fulfill_event(a->ev[k]);
  }
  return NULL;
}

static void test_chain(void) {
  static chain_arg a;
  int y = 0;
  for (int k = 0; k < CHAIN; k++) {
    chain_fulfilled[k] = 0;
    chain_saw[k] = -1;
  }
  chain_order_bad = 0;
  for (int k = 0; k < CHAIN; k++) {
    omp_event_handle_t ev = (omp_event_handle_t)0;
#pragma omp task detach(ev) depend(inout: y) firstprivate(k) shared(y)
    {
      /* the previous detached task has completed: its event was fulfilled */
      if (k > 0 && !__atomic_load_n(&chain_fulfilled[k - 1], __ATOMIC_SEQ_CST))
        __atomic_fetch_add(&chain_order_bad, 1, __ATOMIC_SEQ_CST);
      if (y != k) __atomic_fetch_add(&chain_order_bad, 1, __ATOMIC_SEQ_CST);
      y = k + 1;
      __atomic_store_n(&chain_saw[k], 1, __ATOMIC_SEQ_CST);
    }
    a.ev[k] = ev;
  }
  int final_y = -1;
#pragma omp task depend(in: y) shared(y, final_y)
  final_y = y + 100 * !__atomic_load_n(&chain_fulfilled[CHAIN - 1], __ATOMIC_SEQ_CST);
  pthread_t th;
  pthread_create(&th, NULL, chain_fulfiller, &a);
#pragma omp taskwait
  pthread_join(th, NULL);
  CHECK_EQ("detached chain: order", chain_order_bad, 0);
  CHECK_EQ("detached chain: final dependant", final_y, CHAIN);
  for (int k = 0; k < CHAIN; k++) CHECK_EQ("detached chain: body ran", chain_saw[k], 1);
}

/* ---------- many detached tasks, one pthread fulfils them all ---------- */
#define MANY 32
typedef struct {
  omp_event_handle_t ev[MANY];
} many_arg;
static int many_fulfilled[MANY];

static void *many_fulfiller(void *p) {
  many_arg *a = p;
  sleep_us(300);
  for (int k = MANY - 1; k >= 0; k--) {
    __atomic_store_n(&many_fulfilled[k], 1, __ATOMIC_SEQ_CST);
    omp_fulfill_event(a->ev[k]);
  }
  return NULL;
}

static void test_many(void) {
  static many_arg a;
  static int deps[MANY], dep_ok[MANY];
  for (int k = 0; k < MANY; k++) many_fulfilled[k] = 0, dep_ok[k] = -1;
  for (int k = 0; k < MANY; k++) {
    omp_event_handle_t ev = (omp_event_handle_t)0;
#pragma omp task detach(ev) depend(out: deps[k])
    {
      (void)0;
    }
    a.ev[k] = ev;
#pragma omp task depend(in: deps[k]) firstprivate(k)
    dep_ok[k] = __atomic_load_n(&many_fulfilled[k], __ATOMIC_SEQ_CST);
  }
  pthread_t th;
  pthread_create(&th, NULL, many_fulfiller, &a);
#pragma omp taskwait
  for (int k = 0; k < MANY; k++) {
    CHECK_EQ("32 detached tasks: taskwait did not wait", many_fulfilled[k], 1);
    CHECK_EQ("32 detached tasks: dependant saw the fulfilment", dep_ok[k], 1);
  }
  pthread_join(th, NULL);
}

int main(void) {
  for (int rep = 0; rep < 40; rep++) {
#pragma omp parallel
#pragma omp single
    {
      test_by_task(0);
      test_by_task(1);
      test_by_task(2);
      test_in_body(0);
    }
    test_by_thread(0);
    test_by_thread(1);
    test_by_thread(2);
  }
  /* fewer rounds with pthreads: they sleep, and compete with spinning
     OpenMP threads for the cores */
  for (int rep = 0; rep < 10; rep++) {
#pragma omp parallel
#pragma omp single
    {
      test_by_pthread(0, 0);
      test_by_pthread(0, 1);
      test_by_pthread(1, 0);
      test_by_pthread(1, 1);
      test_in_body(1);
      test_chain();
      test_many();
    }
    test_pthread_barrier(1);
    test_pthread_barrier(0);
  }
  return failures != 0;
}
