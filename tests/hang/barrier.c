// A hang: a barrier the team's last thread never reaches (it ends its part of the region while
// the rest of the team waits in the barrier).
#include <omp.h>
#include <stdio.h>

int main(void) {
#pragma omp parallel
    {
        if (omp_get_thread_num() != omp_get_num_threads() - 1) {
#pragma omp barrier
        }
    }
    printf("not reached\n");
    return 0;
}
