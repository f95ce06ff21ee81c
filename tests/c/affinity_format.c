// affinity_format.c - the thread affinity format routines (clang's omp.h maps
// them to ompc_*; a program calling them did not load before):
//  * omp_set/get_affinity_format: the length returned, the copy truncated
//  * omp_capture_affinity in a region of 3 threads: every field against the
//    routine or system call it names (%n %N %L %a %t %T %P %i %H, long names),
//    widths (left, `.` right, `0.` zero-padded), %%, unknown fields
//    ("undefined"), %A against the thread's own CPU set; the full length
//    returned whatever the buffer size
//  * omp_display_affinity prints the same line (and a newline) on stdout
#define _GNU_SOURCE
// oxiomp-test: gcc-reference=skip
// (libgomp lacks libomp's affinity format fields.)
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static void expect(const char *what, const char *format, const char *want) {
  char got[512];
  size_t n = omp_capture_affinity(got, sizeof got, format);
  if (strcmp(got, want) != 0 || n != strlen(want)) {
#pragma omp critical
    {
      fprintf(stderr, "FAIL: %s: %s gave [%s] (%zu), expected [%s]\n", what,
              format, got, n, want);
      failures++;
    }
  }
}

// Parses "0-3,5" or "0,1,2,3,5" into a CPU set.
static int parse_cpus(const char *s, cpu_set_t *set) {
  CPU_ZERO(set);
  while (*s) {
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end == s) return 0;
    s = end;
    if (*s == '-') {
      b = strtol(s + 1, &end, 10);
      s = end;
    }
    for (long c = a; c <= b; c++) CPU_SET(c, set);
    if (*s == ',') s++;
  }
  return 1;
}

int main(void) {
  char buf[256];
  omp_set_affinity_format("%n of %N");
  CHECK_EQ("get format length", omp_get_affinity_format(buf, sizeof buf), 8);
  CHECK("get format text", strcmp(buf, "%n of %N") == 0);
  CHECK_EQ("get format, small buffer", omp_get_affinity_format(buf, 3), 8);
  CHECK("get format truncated", strcmp(buf, "%n") == 0);

  char host[256] = "";
  gethostname(host, sizeof host - 1);
#pragma omp parallel num_threads(3)
  {
    char want[512];
    int n = omp_get_thread_num(), N = omp_get_num_threads();
    snprintf(want, sizeof want, "%d %d %d %d %d %d", n, N, omp_get_level(),
             omp_get_ancestor_thread_num(omp_get_level() - 1),
             omp_get_team_num(), omp_get_num_teams());
    expect("short names", "%n %N %L %a %t %T", want);
    expect("long names",
           "%{thread_num} %{num_threads} %{nesting_level} %{ancestor_tnum} "
           "%{team_num} %{num_teams}",
           want);
    snprintf(want, sizeof want, "%d %ld %s", (int)getpid(), (long)gettid(), host);
    expect("process, thread, host", "%P %i %H", want);
    snprintf(want, sizeof want, "[%d  ][  %d][00%d][%d]", n, n, n, n);
    expect("widths", "[%3n][%.3n][%0.3n][%{thread_num}]", want);
    expect("percent and unknown fields", "100%% %X %{foobar}", "100% undefined undefined");
    expect("an empty format is the default", "", (snprintf(want, sizeof want, "%d of %d", n, N), want));

    char aff[512];
    omp_capture_affinity(aff, sizeof aff, "%A");
    cpu_set_t mine, listed;
    sched_getaffinity(0, sizeof mine, &mine);
    int ok = parse_cpus(aff, &listed) && CPU_EQUAL(&mine, &listed);
    if (!ok) {
#pragma omp critical
      {
        fprintf(stderr, "FAIL: %%A gave [%s], not the thread's CPU set\n", aff);
        failures++;
      }
    }
    char small[5];
    size_t len = omp_capture_affinity(small, sizeof small, "abcdefgh");
    if (len != 8 || strcmp(small, "abcd") != 0) {
#pragma omp atomic
      failures++;
    }
    if (omp_capture_affinity(NULL, 0, "abc") != 3) {
#pragma omp atomic
      failures++;
    }
  }

  // omp_display_affinity writes the line on stdout: catch it in a file.
  fflush(stdout);
  FILE *tmp = tmpfile();
  int saved = dup(1);
  dup2(fileno(tmp), 1);
  omp_display_affinity("shown %n/%N");
  omp_display_affinity(NULL);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  rewind(tmp);
  char line1[100] = "", line2[100] = "";
  CHECK("a first line", fgets(line1, sizeof line1, tmp) != NULL);
  CHECK("a second line", fgets(line2, sizeof line2, tmp) != NULL);
  CHECK("displayed with the given format", strcmp(line1, "shown 0/1\n") == 0);
  CHECK("displayed with the format variable", strcmp(line2, "0 of 1\n") == 0);
  fclose(tmp);
  return failures != 0;
}
