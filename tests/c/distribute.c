// distribute.c - `distribute` on host teams (clang-19: __kmpc_push_num_teams, then
// __kmpc_for_static_init_* with the distribute kinds in each team; `distribute parallel for`
// nests a worksharing loop over the team's block), and the two entries compilers other than
// clang use, called directly: __kmpc_dist_for_static_init_{4,4u,8,8u} (a team's block, then
// the thread's part of it) and __kmpc_team_static_init_{4,4u,8,8u} (chunks dealt to teams).
// Checked by property, so that libomp, run as the reference, must agree: every iteration
// runs exactly once; plain dist_schedule(static) gives each team one contiguous block;
// dist_schedule(static, c) deals chunk k to team k mod num_teams; a thread's part of a
// combined loop lies inside its team's block; exactly one thread gets the last-iteration
// flag, the one whose part holds the last iteration. int, unsigned, long long and unsigned
// long long induction variables, steps 1, 3 and -2, empty and one-iteration loops.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: gcc=skip: calls libomp's __kmpc_* entries directly
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "check.h"

#include "kmp_abi.h"
static ident_t loc = {0, 2, 0, 22, ";distribute.c;main;0;0;;"};
void __kmpc_for_static_fini(ident_t *, int32_t);
void __kmpc_dist_for_static_init_4(ident_t *, int32_t, int32_t, int32_t *, int32_t *, int32_t *,
                                   int32_t *, int32_t *, int32_t, int32_t);
void __kmpc_dist_for_static_init_8u(ident_t *, int32_t, int32_t, int32_t *, uint64_t *,
                                    uint64_t *, uint64_t *, int64_t *, int64_t, int64_t);
void __kmpc_team_static_init_4(ident_t *, int32_t, int32_t *, int32_t *, int32_t *, int32_t *,
                               int32_t, int32_t);
void __kmpc_team_static_init_8(ident_t *, int32_t, int32_t *, int64_t *, int64_t *, int64_t *,
                               int64_t, int64_t);

#define N 1000
#define MAXTEAMS 8
static int hits[N];
static int owner[N]; /* team + 1 */
static int flags_set, flag_right;

static void reset(void) {
  memset(hits, 0, sizeof hits);
  memset(owner, 0, sizeof owner);
  flags_set = flag_right = 0;
}

static void mark(int i, int team) {
  __atomic_fetch_add(&hits[i], 1, __ATOMIC_RELAXED);
  __atomic_store_n(&owner[i], team + 1, __ATOMIC_RELAXED);
}

static int count_wrong(int n) {
  int wrong = 0;
  for (int i = 0; i < n; i++) wrong += hits[i] != 1;
  for (int i = n; i < N; i++) wrong += hits[i] != 0;
  return wrong;
}

/* Each team's iterations form one contiguous run, teams in increasing order. */
static int blocks_wrong(int n) {
  int wrong = 0;
  for (int i = 1; i < n; i++) wrong += owner[i] < owner[i - 1];
  return wrong;
}

/* Chunk k of c iterations belongs to team k mod nteams. */
static int chunks_wrong(int n, int c, int nteams) {
  int wrong = 0;
  for (int i = 0; i < n; i++) wrong += owner[i] != (i / c) % nteams + 1;
  return wrong;
}

static void pragmas(void) {
  static const int sizes[] = {0, 1, 7, N};
  for (int s = 0; s < 4; s++) {
    int n = sizes[s], nt = 0;
    reset();
#pragma omp teams distribute num_teams(3)
    for (int i = 0; i < n; i++) {
      mark(i, omp_get_team_num());
      if (i == 0) nt = omp_get_num_teams();
    }
    CHECK_EQ("distribute (int): each iteration once", count_wrong(n), 0);
    CHECK_EQ("distribute: one contiguous block per team", blocks_wrong(n), 0);

    reset();
#pragma omp teams distribute dist_schedule(static, 7) num_teams(3)
    for (unsigned i = 0; i < (unsigned)n; i++) {
      mark(i, omp_get_team_num());
      if (i == 0) nt = omp_get_num_teams();
    }
    CHECK_EQ("distribute dist_schedule(static,7) (unsigned): each iteration once", count_wrong(n), 0);
    if (n > 0) CHECK_EQ("dist_schedule(static,7): chunk k to team k mod teams", chunks_wrong(n, 7, nt), 0);

    reset();
#pragma omp teams distribute parallel for num_teams(2) thread_limit(3)
    for (long long i = 0; i < n; i++) mark(i, omp_get_team_num());
    CHECK_EQ("distribute parallel for (long long): each iteration once", count_wrong(n), 0);
    CHECK_EQ("distribute parallel for: one block per team", blocks_wrong(n), 0);

    reset();
#pragma omp teams distribute parallel for dist_schedule(static, 5) schedule(dynamic, 3) num_teams(3)
    for (unsigned long long i = 0; i < (unsigned long long)n; i++) {
      mark(i, omp_get_team_num());
      if (i == 0) nt = omp_get_num_teams();
    }
    CHECK_EQ("distribute parallel for, dynamic inside (unsigned long long)", count_wrong(n), 0);
    if (n > 0) CHECK_EQ("dist_schedule(static,5) with dynamic inside: chunks to teams", chunks_wrong(n, 5, nt), 0);

    /* step -2: i = 2n-1, 2n-3, ..., 1 (n iterations), indexed 0..n-1 */
    reset();
#pragma omp teams distribute num_teams(4)
    for (int i = 2 * n - 1; i >= 0; i -= 2) mark((2 * n - 1 - i) / 2, omp_get_team_num());
    CHECK_EQ("distribute with step -2: each iteration once", count_wrong(n), 0);
  }
}

/* __kmpc_dist_for_static_init_4 in a parallel region inside each team, with the thread's
 * static part (chunk 0) or chunked (schedule 33, chunk c), over lo..hi by step. */
static void dist_for_direct(int lo, int hi, int step, int sched, int chunk) {
  int n = hi < lo ? 0 : (hi - lo) / step + 1;
  reset();
  int outside = 0;
#pragma omp teams num_teams(3) thread_limit(2) reduction(+ : outside)
  {
#pragma omp parallel reduction(+ : outside)
    {
      int32_t g = __kmpc_global_thread_num(&loc);
      int32_t last = 0, l = lo, u = hi, ud = hi, st = 1;
      __kmpc_dist_for_static_init_4(&loc, g, sched, &last, &l, &u, &ud, &st, step, chunk);
      int team = omp_get_team_num(), got_last = 0;
      /* clang's protocol: run [l, min(u, ud)], then both bounds move on by the stride */
      for (int32_t b = l, e = u; b <= ud; b += st, e += st) {
        for (int32_t i = b; i <= e && i <= ud; i += step) {
          if (i < lo || i > hi) outside++;
          else mark((i - lo) / step, team);
          got_last |= i == lo + (n - 1) * step;
        }
        if (sched == 34) break;
      }
      __kmpc_for_static_fini(&loc, g);
      if (last) __atomic_fetch_add(&flags_set, 1, __ATOMIC_RELAXED);
      if (last && got_last) __atomic_fetch_add(&flag_right, 1, __ATOMIC_RELAXED);
    }
  }
  CHECK_EQ("__kmpc_dist_for_static_init_4: each iteration once", count_wrong(n), 0);
  CHECK_EQ("__kmpc_dist_for_static_init_4: one block per team", blocks_wrong(n), 0);
  CHECK_EQ("__kmpc_dist_for_static_init_4: no iteration outside the loop", outside, 0);
  if (n > 0) {
    CHECK_EQ("__kmpc_dist_for_static_init_4: one last-iteration flag", flags_set, 1);
    CHECK_EQ("__kmpc_dist_for_static_init_4: on the thread with the last iteration", flag_right, 1);
  }
}

/* The 64-bit unsigned entry, unchunked, near the top of the type. */
static void dist_for_direct_8u(void) {
  const uint64_t lo = UINT64_MAX - 3 * (N - 1) - 3, step = 3;
  reset();
#pragma omp teams num_teams(2) thread_limit(2)
#pragma omp parallel
  {
    int32_t g = __kmpc_global_thread_num(&loc), last = 0;
    uint64_t l = lo, u = lo + (N - 1) * step, ud = u;
    int64_t st = 1;
    __kmpc_dist_for_static_init_8u(&loc, g, 34, &last, &l, &u, &ud, &st, step, 0);
    for (uint64_t i = l; i <= u && i >= lo; i += step) {
      mark((int)((i - lo) / step), omp_get_team_num());
      if (i > UINT64_MAX - step) break;
    }
    __kmpc_for_static_fini(&loc, g);
    if (last) __atomic_fetch_add(&flags_set, 1, __ATOMIC_RELAXED);
  }
  CHECK_EQ("__kmpc_dist_for_static_init_8u near the top: each iteration once", count_wrong(N), 0);
  CHECK_EQ("__kmpc_dist_for_static_init_8u: one last-iteration flag", flags_set, 1);
}

/* __kmpc_team_static_init: chunks of c dealt to the teams (on each team's initial thread). */
static void team_direct(int n, int c) {
  reset();
  int nt = 0;
#pragma omp teams num_teams(3)
  {
    int32_t g = __kmpc_global_thread_num(&loc), last = 0, l = 0, u = n - 1, st = 1;
    int64_t l8 = 0, u8 = (int64_t)n - 1, st8 = 1;
    int team = omp_get_team_num();
    if (team == 0) nt = omp_get_num_teams();
    __kmpc_team_static_init_4(&loc, g, &last, &l, &u, &st, 1, c);
    for (int32_t b = l, e = u; b < n; b += st, e += st)
      for (int32_t i = b; i <= e && i < n; i++) mark(i, team);
    if (last) __atomic_fetch_add(&flags_set, 1, __ATOMIC_RELAXED);
    /* the 64-bit entry must give the same first chunk and stride */
    __kmpc_team_static_init_8(&loc, g, &last, &l8, &u8, &st8, 1, c);
    if (l8 != l || u8 != u || st8 != st) __atomic_fetch_add(&flag_right, 1, __ATOMIC_RELAXED);
  }
  CHECK_EQ("__kmpc_team_static_init_4: each iteration once", count_wrong(n), 0);
  if (n > 0) {
    CHECK_EQ("__kmpc_team_static_init_4: chunk k to team k mod teams", chunks_wrong(n, c, nt), 0);
    CHECK_EQ("__kmpc_team_static_init_4: one last-chunk flag", flags_set, 1);
  }
  CHECK_EQ("__kmpc_team_static_init_8 agrees with _4", flag_right, 0);
}

int main(void) {
  pragmas();
  dist_for_direct(0, N - 1, 1, 34, 0);
  dist_for_direct(5, 5 + 3 * (N - 1), 3, 34, 0);
  dist_for_direct(0, N - 1, 1, 33, 4);
  dist_for_direct(0, 0, 1, 34, 0); /* one iteration */
  dist_for_direct(0, -1, 1, 34, 0); /* empty */
  dist_for_direct_8u();
  team_direct(N, 7);
  team_direct(N, 1);
  team_direct(5, 4);
  return failures != 0;
}
