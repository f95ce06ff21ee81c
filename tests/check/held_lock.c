// A mistake for the checks: a lock the team's last thread sets in the region and never unsets
// (unchecked, it stays locked after the region, and the next omp_set_lock waits forever).
#include <omp.h>
#include <stdio.h>

static omp_lock_t lock;

int main(void) {
    omp_init_lock(&lock);
    int n = 0;
#pragma omp parallel
    {
        if (omp_get_thread_num() == omp_get_num_threads() - 1)
            omp_set_lock(&lock);
#pragma omp atomic
        n++;
    }
    printf("n = %d\n", n);
    return 0;
}
