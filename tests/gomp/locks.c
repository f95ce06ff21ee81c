// gcc's locks (a 4-byte omp_lock_t, a 16-byte omp_nest_lock_t) on the runtime: mutual
// exclusion, test_lock, nesting, locks packed next to other data (nothing written beyond a
// lock), many locks made and destroyed; the allocate clause (GOMP_alloc / GOMP_free); an error
// directive's warning, after which the program goes on. Exit status 0 when all hold.
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "../c/check.h"

struct packed {
    int before;
    omp_lock_t a;
    int between;
    omp_lock_t b;
    int after;
};

int main(void) {
    struct packed p = {11, {{0}}, 22, {{0}}, 33};
    omp_init_lock(&p.a);
    omp_init_lock(&p.b);
    CHECK("a lock's neighbours changed", p.before == 11 && p.between == 22 && p.after == 33);

    long count = 0, tested = 0;
    int team = 0;
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads();
        for (int k = 0; k < 2000; k++) {
            omp_set_lock(&p.a);
            count++;
            omp_unset_lock(&p.a);
            if (omp_test_lock(&p.b)) {
                tested++;
                omp_unset_lock(&p.b);
            } else {
                omp_set_lock(&p.b);
                tested++;
                omp_unset_lock(&p.b);
            }
        }
    }
    CHECK("every locked update counted", count == 2000L * team && tested == 2000L * team);
    omp_destroy_lock(&p.a);
    omp_destroy_lock(&p.b);
    CHECK("a lock's neighbours changed", p.before == 11 && p.between == 22 && p.after == 33);

    // Many locks at once, destroyed, and made again.
    enum { M = 3000 };
    omp_lock_t *many = malloc(M * sizeof *many);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < M; i++)
            omp_init_lock(&many[i]);
        int held = 0;
#pragma omp parallel for reduction(+ : held)
        for (int i = 0; i < M; i++) {
            omp_set_lock(&many[i]);
            held += !omp_test_lock(&many[i]);
            omp_unset_lock(&many[i]);
        }
        CHECK("every lock of the round held", held == M);
        for (int i = 0; i < M; i++)
            omp_destroy_lock(&many[i]);
    }
    free(many);

    // A nestable lock: its owner takes it again; others wait for the outermost unset.
    omp_nest_lock_t n;
    omp_init_nest_lock(&n);
    long nested = 0;
#pragma omp parallel
    {
        for (int k = 0; k < 500; k++) {
            omp_set_nest_lock(&n);
            int depth = omp_test_nest_lock(&n);
            nested += depth == 2;
            omp_unset_nest_lock(&n);
            omp_unset_nest_lock(&n);
        }
    }
    omp_destroy_nest_lock(&n);
    CHECK("a nestable lock taken twice by its owner", nested == 500L * team);

    // The allocate clause.
    int sum = 0;
    int x = 0;
#pragma omp parallel firstprivate(x) allocate(omp_low_lat_mem_alloc : x) reduction(+ : sum)
    {
        x += omp_get_thread_num() + 1;
        sum += x;
    }
    CHECK("allocate clause", sum == team * (team + 1) / 2);

#pragma omp error at(execution) severity(warning) message("gomp locks: a warning")

    if (failures)
        return 1;
    puts("gomp locks: ok");
    return 0;
}
