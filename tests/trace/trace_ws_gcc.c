// Worksharing as gcc's code reaches the runtime, traced: a `single` (its end unmarked, then a
// barrier), a `single nowait` followed by a static loop gcc divides itself (no call until
// the loop's barrier), a static loop with a task reduction (a 5.0 loop start without a
// first chunk), and a `single copyprivate` (its end marked by GOMP_single_copy_end).
#include <omp.h>
#include <stdio.h>

int main(void) {
    int ran = 0, last = -1, sum = 0, bad = 0;
#pragma omp parallel shared(ran, last, sum, bad)
    {
#pragma omp single
        { ran++; }
#pragma omp single nowait
        { ran++; }
#pragma omp for lastprivate(conditional : last) schedule(static)
        for (int i = 0; i < 30; i++)
            if (i % 7 == 0)
                last = i;
#pragma omp for reduction(task, + : sum) schedule(static)
        for (int i = 0; i < 30; i++) {
#pragma omp task in_reduction(+ : sum)
            sum += i;
        }
        int v;
#pragma omp single copyprivate(v)
        {
            v = 42;
            ran++;
        }
        if (v != 42) {
#pragma omp atomic
            bad++;
        }
    }
    if (ran != 3 || last != 28 || sum != 435 || bad) {
        printf("ran %d, last %d, sum %d, bad %d\n", ran, last, sum, bad);
        return 1;
    }
    return 0;
}
