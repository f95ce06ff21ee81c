// A mistake for the checks: a barrier after a 'single nowait' that the team's last thread does
// not reach (unchecked, the rest of the team waits in it until the last thread reaches the
// region's end). gcc's code makes the 'single' and the barrier after it one arrival: the
// checks compare the pair.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

static void count(int *ran) {
#pragma omp single nowait
    (*ran)++;
}

int main(void) {
    int ran = 0, done = 0;
#pragma omp parallel
    {
        int last = omp_get_thread_num() == omp_get_num_threads() - 1;
        if (last)
            usleep(100000);
        count(&ran);
        if (!last) {
#pragma omp barrier
        }
#pragma omp atomic
        done++;
    }
    printf("ran = %d, done = %d\n", ran, done);
    return 0;
}
