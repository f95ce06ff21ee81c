// Not a hang: a program with its own SIGQUIT handler keeps it (the runtime reports on SIGQUIT
// only where the program left the default action).
#include <omp.h>
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t caught;

static void on_quit(int sig) {
    (void)sig;
    caught = 1;
}

int main(void) {
    signal(SIGQUIT, on_quit);
    int sum = 0;
#pragma omp parallel reduction(+ : sum)
    sum += omp_get_thread_num() + 1;
    raise(SIGQUIT);
    int n = omp_get_max_threads();
    printf("sum %s, handler %s\n", sum == n * (n + 1) / 2 ? "right" : "wrong", caught ? "ran" : "did not run");
    return 0;
}
