// lock_pair.c - the cost of an uncontended omp_set_lock / omp_unset_lock pair: one thread in a
// region, PAIRS pairs per run, the best of RUNS runs, in ns a pair.
//
//   clang-19 -O2 -fopenmp benches/lock_pair.c -o target/bench/lock_pair
//   OXIOMP_CHECK=1 LD_LIBRARY_PATH=target/release target/bench/lock_pair [PAIRS [RUNS]]
//
// Defaults: 2000000 pairs, 7 runs. With few pairs and one run it suits callgrind (instructions
// a pair: the difference of two runs' totals over the difference of their pairs).
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long pairs = argc > 1 ? atol(argv[1]) : 2000000;
    int runs = argc > 2 ? atoi(argv[2]) : 7;
    if (pairs <= 0 || runs <= 0) {
        fprintf(stderr, "usage: lock_pair [PAIRS [RUNS]]\n");
        return 2;
    }
    omp_lock_t lock;
    omp_init_lock(&lock);
    volatile long sum = 0;
    double best = 1e30;
#pragma omp parallel num_threads(1)
    for (int r = 0; r < runs; r++) {
        double t = omp_get_wtime();
        for (long i = 0; i < pairs; i++) {
            omp_set_lock(&lock);
            sum++;
            omp_unset_lock(&lock);
        }
        t = omp_get_wtime() - t;
        if (t < best)
            best = t;
    }
    omp_destroy_lock(&lock);
    if (sum != pairs * runs) {
        fprintf(stderr, "lock_pair: lost pairs (%ld of %ld)\n", sum, pairs * runs);
        return 1;
    }
    printf("%.2f ns a pair\n", best / (double)pairs * 1e9);
    return 0;
}
