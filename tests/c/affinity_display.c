// affinity_display.c - OMP_DISPLAY_AFFINITY with OMP_AFFINITY_FORMAT: each
// thread prints its line on stdout as it starts a region whose line differs
// from the one it printed last: two regions of 3 threads print each of the 3
// lines once, a region of 2 then prints 2 new ones, a serialized region (if(0))
// one more; the lines go through the program's own stdout, in order with its
// printf output; OMP_DISPLAY_ENV shows both settings (stderr)
// oxiomp-test: threads=1,2,4
// oxiomp-test: env=OMP_DISPLAY_AFFINITY=true
// oxiomp-test: env=OMP_AFFINITY_FORMAT=aff %n of %N
// oxiomp-test: env=OMP_DISPLAY_ENV=true
// oxiomp-test: stderr-contains=OMP_AFFINITY_FORMAT='aff %n of %N'
// oxiomp-test: stderr-contains=OMP_DISPLAY_AFFINITY='TRUE'
// oxiomp-test: gcc-reference=skip
// (libgomp prints the affinity lines on stderr, not in order with the program's stdout.)
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

// The line number (from 0) of the first line equal to `want`, or -1.
static int line_of(FILE *f, const char *want) {
  char line[200];
  int n = 0;
  rewind(f);
  while (fgets(line, sizeof line, f)) {
    if (strcmp(line, want) == 0) return n;
    n++;
  }
  return -1;
}

static int count(FILE *f, const char *want) {
  char line[200];
  int n = 0;
  rewind(f);
  while (fgets(line, sizeof line, f)) n += strcmp(line, want) == 0;
  return n;
}

int main(void) {
  fflush(stdout);
  FILE *tmp = tmpfile();
  int saved = dup(1);
  dup2(fileno(tmp), 1);
  int sum = 0;
  printf("before\n"); // buffered: the stream is a file now
  for (int r = 0; r < 2; r++) {
#pragma omp parallel num_threads(3) reduction(+ : sum)
    sum += omp_get_thread_num();
  }
#pragma omp parallel num_threads(2) reduction(+ : sum)
  sum += omp_get_thread_num();
  printf("after\n");
#pragma omp parallel if (0)
  sum += 10;
  fflush(stdout);
  dup2(saved, 1);
  CHECK_EQ("the regions ran", sum, 2 * 3 + 1 + 10);
  CHECK_EQ("aff 0 of 3", count(tmp, "aff 0 of 3\n"), 1);
  CHECK_EQ("aff 1 of 3", count(tmp, "aff 1 of 3\n"), 1);
  CHECK_EQ("aff 2 of 3", count(tmp, "aff 2 of 3\n"), 1);
  CHECK_EQ("aff 0 of 2", count(tmp, "aff 0 of 2\n"), 1);
  CHECK_EQ("aff 1 of 2", count(tmp, "aff 1 of 2\n"), 1);
  CHECK_EQ("a serialized region prints too", count(tmp, "aff 0 of 1\n"), 1);
  CHECK_EQ("in order: the program's line first", line_of(tmp, "before\n"), 0);
  CHECK("in order: then the regions' lines",
        line_of(tmp, "aff 0 of 2\n") < line_of(tmp, "after\n") &&
            line_of(tmp, "after\n") < line_of(tmp, "aff 0 of 1\n"));
  fclose(tmp);
  return failures != 0;
}
