// for_runtime_env.c - schedule(runtime) loops driven by OMP_SCHEDULE (clang: dispatch_init
// with kind 37, so the runtime reads run-sched-var). The program runs itself once per value
// below, with OMP_SCHEDULE set (and the rest of its environment kept); each run checks, for
// int, unsigned, long long and unsigned long long loops of 1000, 1 and 0 iterations:
//  * every iteration runs exactly once;
//  * static,c: iteration i on thread (i / c) mod n; static: one contiguous block per thread,
//    in thread order;
//  * dynamic,c: each aligned chunk [k c, (k+1) c) on one thread; dynamic,c and guided,c:
//    every run of consecutive iterations on one thread is at least c long, but the last;
//  * omp_get_schedule() reports the kind and chunk OMP_SCHEDULE gave;
//  * a malformed value gives a warning and the default schedule, and loops still run right.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: stderr-contains=oxiomp: warning: OMP_SCHEDULE='bogus,x' is not valid
#include <omp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check.h"

extern char **environ;
#define N 1000
#define KIND(k) ((unsigned)(k) & ~(unsigned)omp_sched_monotonic)

static int owner[N], hits[N];

static const struct { const char *env; omp_sched_t kind; int chunk; } cases[] = {
    {"static,3", omp_sched_static, 3},     {"static", omp_sched_static, 0},
    {"dynamic,2", omp_sched_dynamic, 2},   {"monotonic:dynamic,4", omp_sched_dynamic, 4},
    {"guided,5", omp_sched_guided, 5},     {"nonmonotonic:guided,3", omp_sched_guided, 3},
    {"auto", omp_sched_auto, 0},           {"bogus,x", (omp_sched_t)0, -1},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static void reset(void) {
  memset(owner, -1, sizeof owner);
  memset(hits, 0, sizeof hits);
}

static void mark(long i) {
  __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  owner[i] = omp_get_thread_num();
}

static void check(const char *what, int n, int nth, omp_sched_t kind, int chunk) {
  char msg[160];
  int wrong = 0;
  for (int i = 0; i < N; i++) wrong += hits[i] != (i < n);
  snprintf(msg, sizeof msg, "%s: each iteration once", what);
  CHECK_EQ(msg, wrong, 0);
  wrong = 0;
  if (kind == omp_sched_static && chunk > 0)
    for (int i = 0; i < n; i++) wrong += owner[i] != (i / chunk) % nth;
  if (kind == omp_sched_static && chunk == 0)
    for (int i = 1; i < n; i++) wrong += owner[i] < owner[i - 1];
  if (kind == omp_sched_dynamic)
    for (int i = 1; i < n; i++) wrong += i % chunk != 0 && owner[i] != owner[i - 1];
  if ((kind == omp_sched_dynamic || kind == omp_sched_guided) && chunk > 0) {
    int start = 0;
    for (int i = 1; i <= n; i++)
      if (i == n || owner[i] != owner[i - 1]) {
        wrong += i < n && i - start < chunk;
        start = i;
      }
  }
  snprintf(msg, sizeof msg, "%s: chunks as the schedule says", what);
  CHECK_EQ(msg, wrong, 0);
}

static int child(int c) {
  omp_sched_t kind = cases[c].kind;
  int chunk = cases[c].chunk;
  if (chunk >= 0) {
    omp_sched_t k;
    int ch;
    omp_get_schedule(&k, &ch);
    CHECK_EQ(cases[c].env, KIND(k), kind);
    if (chunk > 0) CHECK_EQ(cases[c].env, ch, chunk);
  } else {
    kind = (omp_sched_t)0; /* the default: only coverage is checked */
  }
  static const int sizes[] = {N, 1, 0};
  for (int s = 0; s < 3; s++) {
    int n = sizes[s], nth = 1;
    char what[120];
    reset();
#pragma omp parallel
    {
#pragma omp single
      nth = omp_get_num_threads();
#pragma omp for schedule(runtime)
      for (int i = 0; i < n; i++) mark(i);
    }
    snprintf(what, sizeof what, "OMP_SCHEDULE=%s int n=%d", cases[c].env, n);
    check(what, n, nth, kind, chunk);
    reset();
#pragma omp parallel for schedule(runtime)
    for (unsigned i = 0; i < (unsigned)n; i++) mark(i);
    snprintf(what, sizeof what, "OMP_SCHEDULE=%s unsigned n=%d", cases[c].env, n);
    check(what, n, nth, kind, chunk);
    reset();
#pragma omp parallel for schedule(runtime)
    for (long long i = 3 * (long long)n - 1; i >= 0; i -= 3) mark(n - 1 - i / 3);
    snprintf(what, sizeof what, "OMP_SCHEDULE=%s long long step -3 n=%d", cases[c].env, n);
    check(what, n, nth, kind, chunk); /* index n-1-i/3 is the logical iteration number */
    reset();
#pragma omp parallel for schedule(runtime)
    for (unsigned long long i = 0; i < (unsigned long long)n; i++) mark((long)i);
    snprintf(what, sizeof what, "OMP_SCHEDULE=%s unsigned long long n=%d", cases[c].env, n);
    check(what, n, nth, kind, chunk);
  }
  return failures != 0;
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "child")) return child(atoi(argv[2]));
  for (int c = 0; c < NCASES; c++) {
    char idx[8], env[64];
    snprintf(idx, sizeof idx, "%d", c);
    snprintf(env, sizeof env, "OMP_SCHEDULE=%s", cases[c].env);
    if (setenv("OMP_SCHEDULE", cases[c].env, 1)) return 2;
    char *args[] = {argv[0], "child", idx, NULL};
    pid_t pid;
    int st = -1;
    if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) != 0 || waitpid(pid, &st, 0) != pid) {
      fprintf(stderr, "cannot run a child\n");
      return 2;
    }
    CHECK_EQ(env, WIFEXITED(st) ? WEXITSTATUS(st) : 128, 0);
  }
  return failures != 0;
}
