// A mistake for the checks: the team's last thread meets a 'single' and a 'for' in the other
// order than the rest of the team. Unchecked, the constructs pair up wrongly.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>

int a[100];

int main(void) {
#pragma omp parallel
    {
        int last = omp_get_thread_num() == omp_get_num_threads() - 1;
        if (last)
            usleep(100000);
        if (!last) {
#pragma omp for nowait
            for (int i = 0; i < 100; i++)
                a[i]++;
#pragma omp single nowait
            a[0]++;
        } else {
#pragma omp single nowait
            a[0]++;
#pragma omp for nowait
            for (int i = 0; i < 100; i++)
                a[i]++;
        }
    }
    printf("a[0] = %d\n", a[0]);
    return 0;
}
