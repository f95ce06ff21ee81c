/* task_body.c - the per-task cost of an at-once task as a function of its body's length
 * (benches/task_body.sh builds and runs it).
 *
 * Every thread of the team creates N tasks, each calling delay(L) (benches/delay.c, a
 * dependent float add chain); the cut-off runs nearly all of them at once. The reference is
 * the same team calling delay(L) N times directly. Prints the best of 7 of each, in TSC ticks
 * per task, and their difference (the "overhead"). A task's runtime work can overlap with the
 * tail of the previous body's add chain (out-of-order execution), and so can the reference's
 * next delay: the overhead depends on L, not only on the runtime's own cost. */
#include <stdio.h>
#include <stdlib.h>
#include <x86intrin.h>

void delay(int);

int main(int argc, char **argv) {
    int L = argc > 1 ? atoi(argv[1]) : 0;
    long n = argc > 2 ? atol(argv[2]) : 400000;
    double best = 1e30, ref = 1e30;
    for (int rep = 0; rep < 7; rep++) {
        unsigned long long t0 = __rdtsc();
#pragma omp parallel
        for (long i = 0; i < n; i++)
            delay(L);
        double r = (double)(__rdtsc() - t0) / n;
        if (r < ref)
            ref = r;
        t0 = __rdtsc();
#pragma omp parallel
        for (long i = 0; i < n; i++) {
#pragma omp task
            delay(L);
        }
        double t = (double)(__rdtsc() - t0) / n;
        if (t < best)
            best = t;
    }
    printf("%.1f %.1f %.1f\n", ref, best, best - ref);
    return 0;
}
