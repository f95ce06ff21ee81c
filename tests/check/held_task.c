// A mistake for the checks: an explicit task sets a lock and ends without unsetting it
// (unchecked, the lock stays set, owned by a task that no longer runs: the next
// omp_set_lock on it waits forever).
#include <omp.h>
#include <stdio.h>

static omp_lock_t lock;

int main(void) {
    omp_init_lock(&lock);
    int n = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task shared(n)
        {
            omp_set_lock(&lock);
            n++;
        }
    }
    printf("n = %d\n", n);
    return 0;
}
