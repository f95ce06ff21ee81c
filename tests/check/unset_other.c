// A mistake for the checks: the implicit task sets a lock and an undeferred task it creates
// (run at once, on the same thread) unsets it; a lock belongs to the task that set it
// (unchecked, nothing is said: the runtime only refuses an unset on another thread).
#include <omp.h>
#include <stdio.h>

int main(void) {
    omp_lock_t guard;
    int count = 0;
    omp_init_lock(&guard);
#pragma omp parallel shared(count)
    {
#pragma omp masked
        {
            omp_set_lock(&guard);
            count += 1;
#pragma omp task if (0) shared(count, guard)
            {
                count += 1;
                omp_unset_lock(&guard);
            }
        }
    }
    printf("count = %d\n", count);
    omp_destroy_lock(&guard);
    return 0;
}
