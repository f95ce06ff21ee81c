// sections.c - `sections` worksharing (clang: __kmpc_for_static_init_4 with
// the 0x402 ident over the section numbers, then a 0xC2 barrier):
//  * sections constructs with 1, 2, 5 and 17 sections: each section runs
//    exactly once per encounter, by a thread of the team; repeated 100 times
//    in one region and across regions
//  * implicit barrier: after a blocking sections every section's write is
//    visible to every thread
//  * lastprivate: the value from the lexically last section; firstprivate
//  * nowait sections back to back (different section counts); all sections
//    of all constructs ran exactly once at the end of the region
//  * parallel sections (combined construct), with lastprivate
// oxiomp-test: threads=1,2,3,4,16
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define REPS 100
static int cnt[4][17];   /* [construct][section] executions */
static int bad_thread;   /* a section ran on a thread outside the team */

static void ran(int c, int s) {
  int t = omp_get_thread_num();
  if (t < 0 || t >= omp_get_num_threads()) __atomic_fetch_add(&bad_thread, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&cnt[c][s], 1, __ATOMIC_RELAXED);
}

static void check_counts(const char *label, int c, int nsec, int expected) {
  char buf[200];
  for (int s = 0; s < nsec; s++) {
    snprintf(buf, sizeof buf, "%s: executions of section %d", label, s);
    CHECK_EQ(buf, cnt[c][s], expected);
  }
}

int main(void) {
  /* blocking sections with 1, 2, 5 sections, repeated in one region; after
     each construct every thread checks that all sections have run */
  {
    int not_visible = 0;
    memset(cnt, 0, sizeof cnt);
#pragma omp parallel shared(not_visible)
    {
      for (int r = 1; r <= REPS; r++) {
#pragma omp sections
        {
          ran(0, 0);
        }
        if (__atomic_load_n(&cnt[0][0], __ATOMIC_RELAXED) != r)
          __atomic_fetch_add(&not_visible, 1, __ATOMIC_RELAXED);
#pragma omp sections
        {
#pragma omp section
          ran(1, 0);
#pragma omp section
          ran(1, 1);
        }
        if (__atomic_load_n(&cnt[1][0], __ATOMIC_RELAXED) != r ||
            __atomic_load_n(&cnt[1][1], __ATOMIC_RELAXED) != r)
          __atomic_fetch_add(&not_visible, 1, __ATOMIC_RELAXED);
#pragma omp sections
        {
#pragma omp section
          ran(2, 0);
#pragma omp section
          ran(2, 1);
#pragma omp section
          ran(2, 2);
#pragma omp section
          ran(2, 3);
#pragma omp section
          ran(2, 4);
        }
        for (int s = 0; s < 5; s++)
          if (__atomic_load_n(&cnt[2][s], __ATOMIC_RELAXED) != r)
            __atomic_fetch_add(&not_visible, 1, __ATOMIC_RELAXED);
      }
    }
    check_counts("1 section", 0, 1, REPS);
    check_counts("2 sections", 1, 2, REPS);
    check_counts("5 sections", 2, 5, REPS);
    CHECK_EQ("section results not complete after the implicit barrier", not_visible, 0);
  }

  /* 17 sections (more than most team sizes here), across many regions */
  memset(cnt, 0, sizeof cnt);
  for (int r = 0; r < REPS; r++) {
#pragma omp parallel
    {
#pragma omp sections
      {
#pragma omp section
        ran(3, 0);
#pragma omp section
        ran(3, 1);
#pragma omp section
        ran(3, 2);
#pragma omp section
        ran(3, 3);
#pragma omp section
        ran(3, 4);
#pragma omp section
        ran(3, 5);
#pragma omp section
        ran(3, 6);
#pragma omp section
        ran(3, 7);
#pragma omp section
        ran(3, 8);
#pragma omp section
        ran(3, 9);
#pragma omp section
        ran(3, 10);
#pragma omp section
        ran(3, 11);
#pragma omp section
        ran(3, 12);
#pragma omp section
        ran(3, 13);
#pragma omp section
        ran(3, 14);
#pragma omp section
        ran(3, 15);
#pragma omp section
        ran(3, 16);
      }
    }
  }
  check_counts("17 sections across regions", 3, 17, REPS);

  /* lastprivate / firstprivate */
  {
    int lp = -1, fp = 40, lp2 = -1;
    double ld = 0.0;
    int saw_fp = 0;
#pragma omp parallel shared(saw_fp)
    {
#pragma omp sections lastprivate(lp, ld) firstprivate(fp)
      {
#pragma omp section
        {
          lp = 1;
          ld = 1.5;
          if (fp == 40) __atomic_fetch_add(&saw_fp, 1, __ATOMIC_RELAXED);
        }
#pragma omp section
        {
          lp = 2;
          ld = 2.5;
          if (fp == 40) __atomic_fetch_add(&saw_fp, 1, __ATOMIC_RELAXED);
        }
#pragma omp section
        {
          lp = 3;
          ld = 3.25;
          if (fp == 40) __atomic_fetch_add(&saw_fp, 1, __ATOMIC_RELAXED);
          fp = 0; /* private copy only */
        }
      }
      /* single section with lastprivate */
#pragma omp sections lastprivate(lp2)
      {
        lp2 = 99;
      }
    }
    CHECK_EQ("sections lastprivate int (lexically last section)", lp, 3);
    CHECK_EQ("sections lastprivate double * 4", (long long)(ld * 4), 13);
    CHECK_EQ("sections firstprivate seen by each section", saw_fp, 3);
    CHECK_EQ("sections firstprivate original unchanged", fp, 40);
    CHECK_EQ("single-section lastprivate", lp2, 99);
  }

  /* nowait sections back to back: 3, 1, 4 sections, then 2 blocking */
  memset(cnt, 0, sizeof cnt);
  bad_thread = 0;
#pragma omp parallel
  {
    for (int r = 0; r < REPS; r++) {
#pragma omp sections nowait
      {
#pragma omp section
        ran(0, 0);
#pragma omp section
        ran(0, 1);
#pragma omp section
        ran(0, 2);
      }
#pragma omp sections nowait
      {
        ran(1, 0);
      }
#pragma omp sections nowait
      {
#pragma omp section
        ran(2, 0);
#pragma omp section
        ran(2, 1);
#pragma omp section
        ran(2, 2);
#pragma omp section
        ran(2, 3);
      }
    }
#pragma omp sections
    {
#pragma omp section
      ran(3, 0);
#pragma omp section
      ran(3, 1);
    }
  }
  check_counts("nowait 3 sections", 0, 3, REPS);
  check_counts("nowait 1 section", 1, 1, REPS);
  check_counts("nowait 4 sections", 2, 4, REPS);
  check_counts("blocking 2 sections after nowait ones", 3, 2, 1);
  CHECK_EQ("section run by a thread outside the team", bad_thread, 0);

  /* parallel sections (combined) with lastprivate, across regions */
  memset(cnt, 0, sizeof cnt);
  {
    int last = 0;
    for (int r = 0; r < REPS; r++) {
#pragma omp parallel sections lastprivate(last)
      {
#pragma omp section
        {
          ran(0, 0);
          last = 10 * r;
        }
#pragma omp section
        {
          ran(0, 1);
          last = 10 * r + 1;
        }
#pragma omp section
        {
          ran(0, 2);
          last = 10 * r + 2;
        }
      }
      if (last != 10 * r + 2) {
        CHECK_EQ("parallel sections lastprivate", last, 10 * r + 2);
        break;
      }
    }
    check_counts("parallel sections", 0, 3, REPS);
  }

  /* parallel sections with num_threads(2) and 5 sections */
  memset(cnt, 0, sizeof cnt);
  {
    int nth = 0;
#pragma omp parallel sections num_threads(2)
    {
#pragma omp section
      {
        ran(1, 0);
        nth = omp_get_num_threads();
      }
#pragma omp section
      ran(1, 1);
#pragma omp section
      ran(1, 2);
#pragma omp section
      ran(1, 3);
#pragma omp section
      ran(1, 4);
    }
    check_counts("parallel sections num_threads(2)", 1, 5, 1);
    CHECK_EQ("parallel sections num_threads(2) team size", nth, 2);
  }

  if (failures) {
    fprintf(stderr, "sections: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok sections\n");
  return 0;
}
