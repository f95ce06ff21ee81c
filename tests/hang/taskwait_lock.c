// A hang: a task holds a lock while it waits in a taskwait for its child, which asks for
// the same lock. The child is made to run on another thread (its creator waits until it has
// begun); on the same thread the runtime reports the lock call itself.
#include <omp.h>
#include <sched.h>
#include <stdio.h>

static omp_lock_t lock;
static int begun;

int main(void) {
    omp_init_lock(&lock);
#pragma omp parallel
#pragma omp single
    {
        omp_set_lock(&lock);
#pragma omp task
        {
#pragma omp atomic write
            begun = 1;
            omp_set_lock(&lock);
            omp_unset_lock(&lock);
        }
        for (;;) {
            int b;
#pragma omp atomic read
            b = begun;
            if (b)
                break;
            sched_yield();
        }
#pragma omp taskwait
        omp_unset_lock(&lock);
    }
    printf("not reached\n");
    return 0;
}
