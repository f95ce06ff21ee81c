// A program with no tool of its own: one parallel region of 2 threads.
#include <omp.h>
#include <stdio.h>

int main(void) {
    int n = 0;
#pragma omp parallel num_threads(2)
    {
#pragma omp atomic
        n++;
    }
    printf("prog: %d threads\n", n);
    return n == 2 ? 0 : 1;
}
