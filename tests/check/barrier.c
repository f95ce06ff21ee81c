// A mistake for the checks: a barrier the team's last thread does not reach (unchecked, the
// rest of the team waits in it forever).
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int main(void) {
    int done = 0;
#pragma omp parallel
    {
        int last = omp_get_thread_num() == omp_get_num_threads() - 1;
        if (!last) {
#pragma omp barrier
        }
        if (last)
            usleep(100000);
#pragma omp atomic
        done++;
    }
    printf("done = %d\n", done);
    return 0;
}
