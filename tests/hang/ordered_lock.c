// A hang: in an ordered loop, iteration 1 sets a lock and then waits for its turn in the
// ordered region, while iteration 0, before its ordered region, waits for that lock.
#include <omp.h>
#include <sched.h>
#include <stdio.h>

int main(void) {
    omp_lock_t lock;
    omp_init_lock(&lock);
    int taken = 0;
#pragma omp parallel for ordered schedule(static, 1)
    for (int i = 0; i < 64; i++) {
        if (i == 1) {
            omp_set_lock(&lock);
#pragma omp atomic write
            taken = 1;
        }
        if (i == 0) {
            for (int t = 0; !t; sched_yield()) {
#pragma omp atomic read
                t = taken;
            }
            omp_set_lock(&lock);
        }
#pragma omp ordered
        printf("iteration %d\n", i);
    }
    printf("not reached\n");
    return 0;
}
