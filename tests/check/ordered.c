// A mistake for the checks: an 'ordered' region (in a function the loop body calls, where
// clang cannot see the loop) in a loop without the 'ordered' clause.
#include <omp.h>
#include <stdio.h>

static int sum;

static void step(int i) {
#pragma omp ordered
    sum += i;
}

int main(void) {
#pragma omp parallel
    {
#pragma omp for
        for (int i = 0; i < 100; i++)
            step(i);
    }
    printf("sum = %d\n", sum);
    return 0;
}
