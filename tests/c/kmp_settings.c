// kmp_settings.c - KMP_SETTINGS=1 prints, at start-up, the variables the program was started
// with as given ("User settings") and the settings in force ("Effective settings"); with
// OMP_PLACES='sockets(' (a malformed count after a place name) the places are the sockets,
// as libomp reads it, with a warning: one place per package of the CPUs the process may use
// (read from /sys here), every CPU in exactly one place.
// oxiomp-test: env=KMP_SETTINGS=1
// oxiomp-test: env=OMP_PLACES=sockets(
// oxiomp-test: threads=none
// oxiomp-test: stderr-contains=User settings:
// oxiomp-test: stderr-contains=   OMP_PLACES='sockets('
// oxiomp-test: stderr-contains=Effective settings:
// oxiomp-test: stderr-contains=   OMP_PLACES='sockets'
// oxiomp-test: stderr-contains=OMP_PLACES='sockets(': missing ')'; using sockets
// oxiomp-test: gcc-reference=skip
// (libgomp ignores KMP_SETTINGS and rejects libomp's place names.)
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>

#include "check.h"

static int package_of(int cpu) {
  char path[128];
  snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
  FILE *f = fopen(path, "r");
  int id = 0;
  if (f) {
    if (fscanf(f, "%d", &id) != 1) id = 0;
    fclose(f);
  }
  return id;
}

int main(void) {
  cpu_set_t mask;
  sched_getaffinity(0, sizeof mask, &mask);
  int packages[1024], np = 0, ncpu = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &mask)) continue;
    ncpu++;
    int p = package_of(c), seen = 0;
    for (int i = 0; i < np; i++) seen |= packages[i] == p;
    if (!seen && np < 1024) packages[np++] = p;
  }
  CHECK_EQ("places: one per package", omp_get_num_places(), np);
  int total = 0;
  for (int p = 0; p < omp_get_num_places(); p++) total += omp_get_place_num_procs(p);
  CHECK_EQ("every CPU in exactly one place", total, ncpu);
  return failures != 0;
}
