// team_cap.c - requests beyond the most threads the runtime may run at once
// (KMP_DEVICE_THREAD_LIMIT=64 here, as a smaller stand-in for the default 65536) run with
// fewer threads, never abort, and warn once:
//  * OMP_NUM_THREADS=100000: the first region has at most 64 threads (one warning naming the
//    variable: its value is cut down at start-up);
//  * 60 threads of the program use OpenMP at once and end: their descriptors serve the workers
//    of the next team (descriptors number the threads alive at once, whatever their kinds);
//  * omp_set_num_threads(INT_MAX): regions run with 64 threads, one warning for all;
//  * teams num_teams(100): every team number below omp_get_num_teams() runs exactly once,
//    though no more than 64 threads exist.
// oxiomp-test: threads=none
// oxiomp-test: cflags=-lpthread
// oxiomp-test: env=OMP_NUM_THREADS=100000
// oxiomp-test: env=KMP_DEVICE_THREAD_LIMIT=64
// oxiomp-test: stderr-contains=OMP_NUM_THREADS='100000' asks for more threads than oxiomp runs at once (64)
// oxiomp-test: stderr-contains=asked for 2147483647 threads
// oxiomp-test: gcc-reference=skip
// (libgomp rejects the thread counts the program sets.)
#include <limits.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>

#include "check.h"
#include "stderr_capture.h"

static void region(const char *what) {
  int count = 0, nth = 0;
#pragma omp parallel shared(count, nth)
  {
    __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
    if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
  }
  CHECK_EQ(what, count, nth);
  CHECK(what, nth >= 1 && nth <= 64);
}

static pthread_barrier_t all_in;

static void *use_openmp(void *arg) {
  (void)arg;
  (void)omp_get_thread_num();
  pthread_barrier_wait(&all_in);
  return NULL;
}

int main(void) {
  capture_stderr();
  region("region with OMP_NUM_THREADS=100000: threads that ran it");
  pthread_t t[60];
  pthread_barrier_init(&all_in, NULL, 60);
  for (int i = 0; i < 60; i++) pthread_create(&t[i], NULL, use_openmp, NULL);
  for (int i = 0; i < 60; i++) pthread_join(t[i], NULL);
  omp_set_num_threads(INT_MAX);
  for (int r = 0; r < 3; r++) {
    int nth = 0;
#pragma omp parallel shared(nth)
    if (omp_get_thread_num() == 0) nth = omp_get_num_threads();
    CHECK_EQ("region of INT_MAX threads: its team", nth, 64);
    region("region of INT_MAX threads: threads that ran it");
  }
  int hits[100] = {0}, nteams = 0;
#pragma omp teams num_teams(100) shared(hits, nteams)
  {
    if (omp_get_team_num() == 0) nteams = omp_get_num_teams();
    __atomic_fetch_add(&hits[omp_get_team_num()], 1, __ATOMIC_RELAXED);
  }
  CHECK("number of teams", nteams >= 1 && nteams <= 100);
  for (int i = 0; i < nteams; i++) CHECK_EQ("times a team ran", hits[i], 1);
  const char *err = captured_stderr();
  CHECK("warnings about the INT_MAX teams: at most one", lines_containing(err, "2147483647") <= 1);
  CHECK("warnings about OMP_NUM_THREADS: at most one", lines_containing(err, "100000") <= 1);
  return failures != 0;
}
