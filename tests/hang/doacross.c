// A hang: a doacross loop whose iteration 5 never reaches its depend(source), so iteration 6,
// which depends on it, waits forever (and so does each later chunk's first iteration, which
// depends on the chunk before).
#include <stdio.h>

int main(void) {
    int sum = 0;
#pragma omp parallel for ordered(1) schedule(static) reduction(+ : sum)
    for (int i = 0; i < 64; i++) {
#pragma omp ordered depend(sink : i - 1)
        sum += i;
        if (i != 5) {
#pragma omp ordered depend(source)
        }
    }
    printf("not reached: %d\n", sum);
    return 0;
}
