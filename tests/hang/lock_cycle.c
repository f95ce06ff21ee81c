// A hang: two tasks that take two locks in opposite orders, each holding its first when it
// asks for its second.
#include <omp.h>
#include <sched.h>
#include <stdio.h>

static omp_lock_t a, b;
static int holding;

static void take(omp_lock_t *first, omp_lock_t *second) {
    omp_set_lock(first);
#pragma omp atomic
    holding++;
    for (;;) {
        int n;
#pragma omp atomic read
        n = holding;
        if (n == 2)
            break;
        sched_yield();
    }
    omp_set_lock(second);
    omp_unset_lock(second);
    omp_unset_lock(first);
}

int main(void) {
    omp_init_lock(&a);
    omp_init_lock(&b);
#pragma omp parallel
#pragma omp single
    {
#pragma omp task
        take(&a, &b);
#pragma omp task
        take(&b, &a);
    }
    printf("not reached\n");
    return 0;
}
