// threadprivate.c - threadprivate globals (native TLS by default; the same
// code built with -fnoopenmp-use-tls is threadprivate_notls.c, which goes
// through __kmpc_threadprivate_cached) and copyin:
//  * an int, an array and a struct: every thread has its own copy (distinct
//    addresses); the primary thread's copy is the original variable (same
//    address as in serial code, sees values assigned in serial code)
//  * other threads' copies start with the static initial values
//  * values persist across regions with the same team size (dyn-var false,
//    no nesting), and the serial part sees the primary's values
//  * copyin of all three, and of only one (the others keep their values),
//    also on parallel for; 50 rounds of copyin with changing values
// oxiomp-test: threads=1,2,3,4,16
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TP_NAME
#define TP_NAME "threadprivate"
#endif

#include "check.h"

struct rec {
  int a;
  double d;
  char name[8];
};

int tp_int = 5;
int tp_arr[4] = {1, 2, 3, 4};
struct rec tp_s = {7, 2.5, "init"};
#pragma omp threadprivate(tp_int, tp_arr, tp_s)

#define MAXT 1024
static void *addr_int[MAXT], *addr_arr[MAXT], *addr_s[MAXT];
static int bad;
static void bump(void) { __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED); }

static int arr_is(int b0, int b1, int b2, int b3) {
  return tp_arr[0] == b0 && tp_arr[1] == b1 && tp_arr[2] == b2 && tp_arr[3] == b3;
}

int main(void) {
  void *orig_int = &tp_int, *orig_arr = tp_arr, *orig_s = &tp_s;
  int nth = 0;
  char buf[200];

  /* serial assignments go to the primary's copy (the original) */
  tp_int = 9;
  tp_arr[0] = 90;
  tp_s.a = 70;

  /* region A: addresses and initial values, then set per-thread values */
  bad = 0;
#pragma omp parallel shared(nth)
  {
    int me = omp_get_thread_num();
    if (me == 0) nth = omp_get_num_threads();
    if (me < MAXT) {
      addr_int[me] = &tp_int;
      addr_arr[me] = tp_arr;
      addr_s[me] = &tp_s;
    }
    if (me == 0) {
      if (tp_int != 9 || !arr_is(90, 2, 3, 4) || tp_s.a != 70) bump();
    } else {
      if (tp_int != 5 || !arr_is(1, 2, 3, 4) || tp_s.a != 7 || tp_s.d != 2.5 ||
          strcmp(tp_s.name, "init") != 0)
        bump();
    }
    tp_int = 100 + me;
    for (int k = 0; k < 4; k++) tp_arr[k] = me * 10 + k;
    tp_s.a = me;
    tp_s.d = me * 0.5;
    snprintf(tp_s.name, sizeof tp_s.name, "t%d", me);
  }
  snprintf(buf, sizeof buf, "%s: threads with unexpected initial values", TP_NAME);
  CHECK_EQ(buf, bad, 0);
  snprintf(buf, sizeof buf, "%s: primary's copy is the original (int)", TP_NAME);
  CHECK_EQ(buf, addr_int[0] == orig_int, 1);
  snprintf(buf, sizeof buf, "%s: primary's copy is the original (array)", TP_NAME);
  CHECK_EQ(buf, addr_arr[0] == orig_arr, 1);
  snprintf(buf, sizeof buf, "%s: primary's copy is the original (struct)", TP_NAME);
  CHECK_EQ(buf, addr_s[0] == orig_s, 1);
  {
    int same = 0;
    for (int i = 0; i < nth && i < MAXT; i++)
      for (int j = i + 1; j < nth && j < MAXT; j++)
        same += addr_int[i] == addr_int[j] || addr_arr[i] == addr_arr[j] || addr_s[i] == addr_s[j];
    snprintf(buf, sizeof buf, "%s: threads sharing a copy", TP_NAME);
    CHECK_EQ(buf, same, 0);
  }
  snprintf(buf, sizeof buf, "%s: serial code sees the primary's value after the region", TP_NAME);
  CHECK_EQ(buf, tp_int, 100);
  CHECK_EQ(buf, tp_s.a, 0);

  /* region B, same team size: values persist, same addresses */
  bad = 0;
#pragma omp parallel
  {
    int me = omp_get_thread_num();
    char nm[8];
    snprintf(nm, sizeof nm, "t%d", me);
    if (tp_int != 100 + me || !arr_is(me * 10, me * 10 + 1, me * 10 + 2, me * 10 + 3) ||
        tp_s.a != me || tp_s.d != me * 0.5 || strcmp(tp_s.name, nm) != 0)
      bump();
    if (me < MAXT && (addr_int[me] != (void *)&tp_int || addr_s[me] != (void *)&tp_s)) bump();
  }
  snprintf(buf, sizeof buf, "%s: threads whose values did not persist into the next region", TP_NAME);
  CHECK_EQ(buf, bad, 0);

  /* copyin of everything */
  tp_int = 555;
  for (int k = 0; k < 4; k++) tp_arr[k] = 500 + k;
  tp_s.a = 55;
  tp_s.d = -1.25;
  strcpy(tp_s.name, "copy");
  bad = 0;
#pragma omp parallel copyin(tp_int, tp_arr, tp_s)
  {
    if (tp_int != 555 || !arr_is(500, 501, 502, 503) || tp_s.a != 55 || tp_s.d != -1.25 ||
        strcmp(tp_s.name, "copy") != 0)
      bump();
    /* change them again, per thread */
    tp_int = 1000 + omp_get_thread_num();
    tp_arr[3] = -omp_get_thread_num();
  }
  snprintf(buf, sizeof buf, "%s: copyin(all): threads with wrong values", TP_NAME);
  CHECK_EQ(buf, bad, 0);

  /* copyin of only tp_int: the array keeps each thread's own value */
  tp_int = 777;
  bad = 0;
#pragma omp parallel copyin(tp_int)
  {
    int me = omp_get_thread_num();
    if (tp_int != 777) bump();
    if (tp_arr[3] != -me || tp_arr[0] != 500) bump();
  }
  snprintf(buf, sizeof buf, "%s: copyin(one): threads with wrong values", TP_NAME);
  CHECK_EQ(buf, bad, 0);

  /* parallel for copyin, 50 rounds */
  bad = 0;
  for (int r = 0; r < 50; r++) {
    tp_int = r * 3;
    tp_s.a = -r;
#pragma omp parallel for copyin(tp_int, tp_s) schedule(static, 1)
    for (int i = 0; i < 64; i++) {
      if (tp_int != r * 3 || tp_s.a != -r) bump();
    }
  }
  snprintf(buf, sizeof buf, "%s: parallel for copyin rounds with wrong values", TP_NAME);
  CHECK_EQ(buf, bad, 0);

  if (failures) {
    fprintf(stderr, "%s: %d failure(s)\n", TP_NAME, failures);
    return 1;
  }
  printf("ok %s\n", TP_NAME);
  return 0;
}
