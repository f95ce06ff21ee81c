// gcc's ordered loops on the runtime (GOMP_loop_ordered_*, GOMP_ordered_start/end): the ordered
// regions run in iteration order under every schedule, also when some iterations skip theirs,
// and the loop's other work runs in parallel. Exit status 0 when every sequence is right.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "../c/check.h"

enum { N = 300 };
static int seq[N], len;

/// The regions ran in increasing order, exactly for the iterations `want` selects.
static int in_order(int (*want)(int)) {
    int k = 0;
    for (int i = 0; i < N; i++)
        if (want(i)) {
            if (k >= len || seq[k] != i)
                return 0;
            k++;
        }
    return k == len;
}
static int every(int i) { (void)i; return 1; }
static int some(int i) { return i % 3 != 2; }

#define RUN(sched, want)                                                                       \
    do {                                                                                       \
        len = 0;                                                                               \
        _Pragma("omp parallel") {                                                              \
            _Pragma(sched) for (int i = 0; i < n; i++) {                                       \
                if (want(i)) {                                                                 \
                    _Pragma("omp ordered") seq[len++] = i;                                     \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        CHECK(sched, in_order(want));                                                          \
    } while (0)

int main(int argc, char **argv) {
    (void)argv;
    int n = N - (argc > 5);
    RUN("omp for ordered", every);
    RUN("omp for ordered schedule(static, 1)", every);
    RUN("omp for ordered schedule(static, 7)", some);
    RUN("omp for ordered schedule(dynamic, 3)", every);
    RUN("omp for ordered schedule(dynamic)", some);
    RUN("omp for ordered schedule(guided)", some);
    RUN("omp for ordered schedule(runtime)", some);
    if (failures)
        return 1;
    puts("gomp ordered: ok");
    return 0;
}
