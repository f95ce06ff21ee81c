// A mistake for the checks: the team's last thread runs its share of a loop through a
// 'nowait' one, so it does not reach the barrier that ends the loop the others run (unchecked,
// they wait in it until the last thread reaches the region's end). Checked gcc-built: gcc's
// code does not say whether a loop ends with a barrier until the loop's end.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    int done = 0;
#pragma omp parallel
    {
        int last = omp_get_thread_num() == omp_get_num_threads() - 1;
        if (last)
            usleep(100000);
        if (!last) {
#pragma omp for schedule(dynamic)
            for (int i = 0; i < 64; i++)
                usleep(10);
        } else {
#pragma omp for schedule(dynamic) nowait
            for (int i = 0; i < 64; i++)
                usleep(10);
        }
#pragma omp atomic
        done++;
    }
    printf("done = %d\n", done);
    return 0;
}
