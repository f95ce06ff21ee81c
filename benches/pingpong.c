/* pingpong.c - the machine's floor for a hand-over between two threads: the round trip of a
 * cache line between the first two CPUs this process may run on (the CPUs two threads get
 * with OMP_PROC_BIND=close), in ns, the median of 9 batches of 20000 round trips.
 *
 * compare.sh runs it next to every construct: a virtual machine's two CPUs may sit on one
 * core complex (here ~110 ns) or on two (~540 ns), and that changes between runs of the
 * same binary; every fork, join, barrier and ordered hand-over pays a part of it. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRIPS 20000
#define BATCHES 9

static _Alignas(64) _Atomic long ping;
static _Alignas(64) _Atomic long pong;
static int cpus[2] = {-1, -1};

static void pin(int cpu) {
    if (cpu < 0)
        return;
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *partner(void *arg) {
    (void)arg;
    pin(cpus[1]);
    for (long i = 1; i <= (long)TRIPS * BATCHES; i++) {
        while (atomic_load_explicit(&ping, memory_order_acquire) != i)
            ;
        atomic_store_explicit(&pong, i, memory_order_release);
    }
    return NULL;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) == 0)
        for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
            if (CPU_ISSET(c, &mask))
                cpus[k++] = c;
    if (cpus[1] < 0) {
        printf("n/a\n"); /* one CPU: no hand-over between cores */
        return 0;
    }
    pin(cpus[0]);
    pthread_t t;
    if (pthread_create(&t, NULL, partner, NULL) != 0)
        return 1;
    double ns[BATCHES];
    long i = 0;
    for (int b = 0; b < BATCHES; b++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int k = 0; k < TRIPS; k++) {
            i++;
            atomic_store_explicit(&ping, i, memory_order_release);
            while (atomic_load_explicit(&pong, memory_order_acquire) != i)
                ;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ns[b] = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / TRIPS;
    }
    pthread_join(t, NULL);
    qsort(ns, BATCHES, sizeof ns[0], cmp);
    printf("%.0f\n", ns[BATCHES / 2]);
    return 0;
}
