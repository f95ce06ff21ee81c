// A mistake for the checks: a 'for' nested in a 'for' of the same team (through a function
// the outer loop calls, which the compiler cannot see).
#include <omp.h>
#include <stdio.h>

int s;

__attribute__((noinline)) static void inner(void) {
#pragma omp for
    for (int j = 0; j < 8; j++) {
#pragma omp atomic
        s++;
    }
}

int main(void) {
#pragma omp parallel
    {
#pragma omp for
        for (int i = 0; i < 8; i++)
            inner();
    }
    printf("s = %d\n", s);
    return 0;
}
