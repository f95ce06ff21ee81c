// team_huge.c - a team larger than the old table of thread descriptors (16384 entries): a
// region of 16500 threads runs with all of them, or, when the system refuses threads (a limit
// on processes), with fewer and exactly one warning that says so; never an abort. A second
// region of that size reuses the team.
// oxiomp-test: threads=none
// oxiomp-test: env=OMP_OVNI=0
#include <omp.h>
#include <stdio.h>

#include "check.h"
#include "stderr_capture.h"

#define WANT 16500

int main(void) {
  capture_stderr();
  omp_set_num_threads(WANT);
  int sizes[2] = {0, 0}, counts[2] = {0, 0};
  for (int r = 0; r < 2; r++) {
    int count = 0, nth = 0;
#pragma omp parallel shared(count, nth)
    {
      __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
      if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
    }
    sizes[r] = nth;
    counts[r] = count;
  }
  const char *err = captured_stderr();
  for (int r = 0; r < 2; r++) {
    CHECK_EQ("threads that ran the region", counts[r], sizes[r]);
    CHECK("team size", sizes[r] >= 1 && sizes[r] <= WANT);
  }
  int warnings = lines_containing(err, "16500");
  if (sizes[0] == WANT) {
    CHECK_EQ("warnings about the full team", warnings, 0);
  } else {
    /* cut short by the system: one warning, however many regions */
    CHECK_EQ("warnings about the cut-short team", warnings, 1);
  }
  printf("team_huge: teams of %d and %d threads\n", sizes[0], sizes[1]);
  return failures != 0;
}
