// A hang: thread 1 sets a lock inside the critical section named alpha, which thread 0 asks
// for while it holds that lock.
#include <omp.h>
#include <sched.h>
#include <stdio.h>

static omp_lock_t lock;
static int inside;

int main(void) {
    omp_init_lock(&lock);
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            omp_set_lock(&lock);
            for (int t = 0; !t; sched_yield()) {
#pragma omp atomic read
                t = inside;
            }
#pragma omp critical(alpha)
            printf("not reached\n");
        } else {
#pragma omp critical(alpha)
            {
#pragma omp atomic write
                inside = 1;
                omp_set_lock(&lock);
            }
        }
    }
    return 0;
}
