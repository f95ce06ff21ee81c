// A hang: an orphaned barrier (in a function the region calls) that the team's last thread
// never reaches. The barrier is called, not tail-called (code follows it), so without `-g` the
// report names the call's own place rather than the region's.
#include <omp.h>
#include <stdio.h>

static int steps;

static void step(int me) {
#pragma omp barrier
#pragma omp atomic
    steps += me;
}

int main(void) {
#pragma omp parallel
    if (omp_get_thread_num() + 1 < omp_get_num_threads())
        step(omp_get_thread_num());
    printf("not reached: %d\n", steps);
    return 0;
}
