// A mistake for the checks: the team's last thread computes the loop's bound differently, so
// its 'for' has other bounds than the rest of the team's.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int a[1024];

int main(void) {
#pragma omp parallel
    {
        int last = omp_get_thread_num() == omp_get_num_threads() - 1;
        if (last)
            usleep(100000);
        int n = last ? 512 : 1024;
#pragma omp for
        for (int i = 0; i < n; i++)
            a[i]++;
    }
    printf("a[0] = %d\n", a[0]);
    return 0;
}
