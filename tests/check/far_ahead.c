// A mistake for the checks, made when the team's other threads are many constructs ahead of
// its last one: the last thread skips the 31st of 40 'for nowait' loops (each with other
// bounds), so its 31st loop has the bounds of the others' 32nd.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int a[200];

int main(void) {
#pragma omp parallel
    {
        int last = omp_get_thread_num() == omp_get_num_threads() - 1;
        if (last)
            usleep(100000);
        for (int k = 0; k < 40; k++) {
            if (last && k == 30)
                continue;
#pragma omp for nowait
            for (int i = 0; i < 100 + k; i++)
                a[i]++;
        }
    }
    printf("a[0] = %d\n", a[0]);
    return 0;
}
