// flush.c - `flush` (__kmpc_flush) in the producer/consumer pattern of the OpenMP Examples:
// the producer writes the data, flushes, then sets the flag (an atomic write); the consumer
// reads the flag (atomic reads) until it is set, flushes, then reads the data, which must be
// the value written before the flag. A thousand hand-overs in both directions between two
// threads, with `flush` and with `flush(list)`; then every thread of the team in a ring.
// oxiomp-test: threads=1,2,3,4,16
#include <omp.h>
#include <sched.h>

#include "check.h"

#define ROUNDS 1000
#define MAXT 64

static int data, flag;
static int ring_data[MAXT], ring_flag[MAXT];

int main(void) {
  int wrong = 0;
#pragma omp parallel num_threads(2) reduction(+ : wrong)
  if (omp_get_num_threads() == 2) { /* a team of one (a thread limit) would wait for itself */
    int me = omp_get_thread_num();
    for (int r = 0; r < ROUNDS; r++) {
      if (me == r % 2) { /* producer this round */
        data = r * 7 + 1;
        if (r % 3) {
#pragma omp flush
        } else {
#pragma omp flush(data, flag)
        }
#pragma omp atomic write
        flag = r + 1;
      } else {
        int f;
        do {
#pragma omp atomic read
          f = flag;
          if (f != r + 1) sched_yield(); /* oversubscribed runs: let the producer run */
        } while (f != r + 1);
#pragma omp flush
        wrong += data != r * 7 + 1;
      }
#pragma omp barrier
    }
  }
  CHECK_EQ("the consumer saw the data written before the flag", wrong, 0);

  int nth = 0;
  wrong = 0;
#pragma omp parallel reduction(+ : wrong)
  {
    int me = omp_get_thread_num(), n = omp_get_num_threads();
    if (me == 0) nth = n;
    if (n <= MAXT) {
      /* thread k waits for k-1's value and passes it on, plus one */
      int got = 0;
      if (me > 0) {
        int f;
        do {
#pragma omp atomic read
          f = ring_flag[me - 1];
          if (!f) sched_yield();
        } while (!f);
#pragma omp flush
        got = ring_data[me - 1];
        wrong += got != me * 10;
      }
      ring_data[me] = (me + 1) * 10 + (me == 0 ? 0 : got - me * 10);
#pragma omp flush
#pragma omp atomic write
      ring_flag[me] = 1;
    }
  }
  CHECK_EQ("every thread of the ring saw its predecessor's value", wrong, 0);
  CHECK("a team", nth >= 1);
  return failures != 0;
}
