// for_dynamic_lastprivate.c - lastprivate on nonmonotonic dynamic loops
// (schedule(dynamic), dynamic,c, nonmonotonic:dynamic,c; clang passes
// 0x40000023): after the loop the original variables hold the values of the
// sequentially last iteration (loop variable: one step past the end), for
// int / unsigned / long long / unsigned long long loops, repeated many times.
// The runtime must not hand another chunk to the thread that got the chunk
// flagged `last` (clang copies out after its final dispatch_next call, reading
// the flag written by the last call that returned a chunk).
// libomp 19 fails this: with work stealing (its nonmonotonic dynamic at
// <= #cores threads) the thread holding the last chunk steals more chunks, the
// flag is overwritten with 0 and no thread copies out (~90% of runs at 2-4
// threads). Hence reference=skip.
// oxiomp-test: threads=1,2,3,4,16
// oxiomp-test: reference=skip
// oxiomp-test: gcc=skip: gcc 12 loses the lastprivate value of an unsigned loop counting down (libgomp fails alike)
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

#define REPS 100

int main(void) {
  for (int r = 0; r < REPS; r++) {
    int i = -1, a = -1, c = -1;
    unsigned u = 0, b = 0;
    long long v = 0, d = 0;
    unsigned long long w = 0, e = 0;
    int chunk = 1 + r % 5;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic) lastprivate(i, a)
      for (i = 0; i < 1000; i++) a = 3 * i;
#pragma omp for schedule(dynamic, chunk) lastprivate(u, b)
      for (u = 1000; u > 7; u -= 3) b = u;
#pragma omp for schedule(nonmonotonic: dynamic, 3) lastprivate(v, d)
      for (v = -500; v <= 500; v += 2) d = v;
#pragma omp for schedule(dynamic, 16) lastprivate(w, e) nowait
      for (w = 0; w < 777; w++) e = w + 1;
#pragma omp for schedule(dynamic) lastprivate(c)
      for (int k = 0; k < 64; k++) c = k;
    }
    CHECK_EQ("dynamic int: lastprivate loop variable", i, 1000);
    CHECK_EQ("dynamic int: lastprivate body variable", a, 2997);
    /* 1000, 997, ..., 10 (330 iterations), next value 7 */
    CHECK_EQ("dynamic,c unsigned down: lastprivate loop variable", u, 7);
    CHECK_EQ("dynamic,c unsigned down: lastprivate body variable", b, 10);
    CHECK_EQ("nonmonotonic:dynamic,3 long long: lastprivate loop variable", v, 502);
    CHECK_EQ("nonmonotonic:dynamic,3 long long: lastprivate body variable", d, 500);
    CHECK_EQ("dynamic,16 nowait unsigned long long: lastprivate loop variable", w, 777);
    CHECK_EQ("dynamic,16 nowait unsigned long long: lastprivate body variable", e, 777);
    CHECK_EQ("dynamic 64 iterations: lastprivate body variable", c, 63);
    if (failures) break;
  }
  if (failures) {
    fprintf(stderr, "for_dynamic_lastprivate: %d failure(s)\n", failures);
    return 1;
  }
  printf("ok for_dynamic_lastprivate\n");
  return 0;
}
