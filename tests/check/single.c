// A mistake for the checks: a 'single' the team's last thread skips, followed by a barrier.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    int ran = 0;
#pragma omp parallel
    {
        int last = omp_get_thread_num() == omp_get_num_threads() - 1;
        if (last)
            usleep(100000);
        if (!last) {
#pragma omp single nowait
            ran++;
        }
#pragma omp barrier
    }
    printf("ran = %d\n", ran);
    return 0;
}
