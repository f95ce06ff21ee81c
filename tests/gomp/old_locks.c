// The lock routines of gcc before 4.4, which such binaries ask for under libgomp's OMP_1.0
// node: omp_lock_t of 4 bytes and omp_nest_lock_t of 8 bytes (two ints, 4-aligned), each
// with guard words around it that the routines must leave alone. Mutual exclusion on a plain
// counter each, nesting counts, test from the owner and from another thread, re-initialisation.
// Exit status 0 when every result holds.
#include <omp.h>
#include <stdio.h>

#include "../c/check.h"

typedef int lock10_t;
typedef struct {
    int owner, count;
} nest_lock10_t;

void lock_init(lock10_t *);
void lock_destroy(lock10_t *);
void lock_set(lock10_t *);
void lock_unset(lock10_t *);
int lock_test(lock10_t *);
void nest_init(nest_lock10_t *);
void nest_destroy(nest_lock10_t *);
void nest_set(nest_lock10_t *);
void nest_unset(nest_lock10_t *);
int nest_test(nest_lock10_t *);
__asm__(".symver lock_init, omp_init_lock@OMP_1.0");
__asm__(".symver lock_destroy, omp_destroy_lock@OMP_1.0");
__asm__(".symver lock_set, omp_set_lock@OMP_1.0");
__asm__(".symver lock_unset, omp_unset_lock@OMP_1.0");
__asm__(".symver lock_test, omp_test_lock@OMP_1.0");
__asm__(".symver nest_init, omp_init_nest_lock@OMP_1.0");
__asm__(".symver nest_destroy, omp_destroy_nest_lock@OMP_1.0");
__asm__(".symver nest_set, omp_set_nest_lock@OMP_1.0");
__asm__(".symver nest_unset, omp_unset_nest_lock@OMP_1.0");
__asm__(".symver nest_test, omp_test_nest_lock@OMP_1.0");

#define GUARD 0x5a5a5a5a
#define ROUNDS 2000

// Packed in ints, so the nestable lock sits at a 4-aligned, not 8-aligned, address.
static struct {
    int before;
    lock10_t lock;
    int between;
    nest_lock10_t nest;
    int after;
} g = {GUARD, 0, GUARD, {0, 0}, GUARD};

int main(void) {
    long counter = 0, nested = 0;
    int nthreads = 0;
    for (int round = 0; round < 2; round++) {
        lock_init(&g.lock);
        nest_init(&g.nest);
        counter = 0;
        nested = 0;
#pragma omp parallel
        {
#pragma omp single
            nthreads = omp_get_num_threads();
            for (int i = 0; i < ROUNDS; i++) {
                if (i % 2) {
                    lock_set(&g.lock);
                } else {
                    while (!lock_test(&g.lock))
                        ;
                }
                long c = counter;
                counter = c + 1;
                lock_unset(&g.lock);

                nest_set(&g.nest);
                int depth = nest_test(&g.nest);
                CHECK_EQ("nestable lock: the owner's test nests", depth, 2);
                c = nested;
                nested = c + 1;
                nest_unset(&g.nest);
                nest_unset(&g.nest);
            }
        }
        CHECK_EQ("simple lock: mutual exclusion on its counter", counter, (long)ROUNDS * nthreads);
        CHECK_EQ("nestable lock: mutual exclusion on its counter", nested, (long)ROUNDS * nthreads);

        nest_set(&g.nest);
        int other = -1;
#pragma omp parallel num_threads(2)
        if (omp_get_thread_num() == 1)
            other = nest_test(&g.nest);
        if (other != -1)
            CHECK_EQ("nestable lock: another thread's test fails while it is held", other, 0);
        CHECK_EQ("nestable lock: the owner's test counts", nest_test(&g.nest), 2);
        nest_unset(&g.nest);
        nest_unset(&g.nest);
        CHECK_EQ("simple lock: test of a free lock", lock_test(&g.lock), 1);
        lock_unset(&g.lock);
        lock_destroy(&g.lock);
        nest_destroy(&g.nest);
    }
    CHECK("the guard words around the locks are untouched",
          g.before == GUARD && g.between == GUARD && g.after == GUARD);

    if (failures)
        return 1;
    puts("gomp OMP_1.0 locks: ok");
    return 0;
}
