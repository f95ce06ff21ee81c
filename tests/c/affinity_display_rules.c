// affinity_display_rules.c - OMP_DISPLAY_AFFINITY with the default format (libomp's text, so
// that what reads libomp's lines reads ours):
//  * omp_get_affinity_format() is "OMP: pid %P tid %i thread %n bound to OS proc set {%A}";
//  * a region of 2 threads prints 2 lines; the same region again prints none;
//  * a new format alone (omp_set_affinity_format) prints nothing: the next region of 2
//    threads prints no line, the information the lines show has not changed;
//  * a region of 3 threads (a new team size) prints 3 lines, in the new format.
// oxiomp-test: threads=none
// oxiomp-test: env=OMP_DISPLAY_AFFINITY=true
// oxiomp-test: gcc-reference=skip
// (libgomp's default affinity format is not libomp's.)
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static int count_prefix(FILE *f, const char *prefix) {
  char line[300];
  int n = 0;
  rewind(f);
  while (fgets(line, sizeof line, f)) n += strncmp(line, prefix, strlen(prefix)) == 0;
  return n;
}

int main(void) {
  char fmt[200];
  omp_get_affinity_format(fmt, sizeof fmt);
  CHECK(("the default format is libomp's"),
        strcmp(fmt, "OMP: pid %P tid %i thread %n bound to OS proc set {%A}") == 0);
  fflush(stdout);
  FILE *tmp = tmpfile();
  int saved = dup(1);
  dup2(fileno(tmp), 1);
  int n = 0;
  for (int r = 0; r < 2; r++) {
#pragma omp parallel num_threads(2) reduction(+ : n)
    n += 1;
  }
  fflush(stdout);
  long after_two = ftell(tmp);
  omp_set_affinity_format("NEW %n of %N");
#pragma omp parallel num_threads(2) reduction(+ : n)
  n += 1;
  fflush(stdout);
  long after_format = ftell(tmp);
#pragma omp parallel num_threads(3) reduction(+ : n)
  n += 1;
  fflush(stdout);
  dup2(saved, 1);
  CHECK_EQ("the regions ran", n, 9);
  // The initial thread may print its own line at level 0 first: count the team's lines.
  int lines = count_prefix(tmp, "OMP: pid ");
  CHECK(("two regions of 2 threads: 2 lines (and the initial thread's at most)"), lines == 2 || lines == 3);
  CHECK(("a new format alone prints nothing"), after_format == after_two);
  CHECK_EQ("a region of 3 threads: 3 lines in the new format", count_prefix(tmp, "NEW "), 3);
  CHECK_EQ("... one per thread", count_prefix(tmp, "NEW 2 of 3"), 1);
  fclose(tmp);
  return failures != 0;
}
