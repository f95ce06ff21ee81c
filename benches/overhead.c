/*
 * overhead.c - OpenMP construct overheads, EPCC micro-benchmark methodology
 * (syncbench / schedbench / taskbench, EPCC OpenMP MicroBenchmark Suite 3.1/4.0).
 *
 * Builds with either compiler, so the same source can be run on every runtime:
 *   clang-19 -fopenmp -O2 benches/overhead.c -o overhead   (libomp / oxiomp)
 *   gcc      -fopenmp -O2 benches/overhead.c -o overhead   (libgomp)
 *
 * Usage:  ./overhead [CONSTRUCT...]        (no arguments: every construct)
 *         ./overhead --list
 * Output: one line per construct on stdout, machine-readable:
 *         NAME <median_us> <min_us> <max_us>
 *         Diagnostics (thread count, delay lengths, inner reps) go to stderr.
 *
 * Method (as EPCC): every construct wraps the same small delay(); a reference
 * loop runs that delay work without the construct. The number of inner
 * repetitions is calibrated so one test run takes about OVH_TIME_MS. Then,
 * for each of OVH_OUTER outer repetitions (plus one discarded warm-up), the
 * reference and the test are timed back to back and
 *     overhead = (t_test - t_reference) / innerreps
 * is recorded; the median (and min/max) over outer repetitions is reported.
 * Unlike EPCC, reference and test are paired per outer repetition (which
 * cancels slow drifts) and the median is quoted instead of the mean.
 *
 * Units: microseconds per construct instance; for the schedule tests
 * (STATIC ... GUIDED_1, TASKLOOP) microseconds per whole loop of
 * itersperthr * nthreads iterations, as schedbench reports.
 *
 * Environment:
 *   OVH_OUTER          outer repetitions                         (default 20)
 *   OVH_TIME_MS        target time of one test run, ms           (default 100)
 *   OVH_DELAY_US       delay inside sync/task constructs, us     (default 0.1)
 *   OVH_SCHED_DELAY_US delay per loop iteration in sched tests   (default 0.1,
 *                      as EPCC 4.0; EPCC 3.x schedbench used 15)
 *   OVH_ITERSPERTHR    schedule-test iterations per thread       (default 1024,
 *                      as EPCC 4.0; 3.x used 128)
 *   OVH_CHUNK          chunk of STATIC_N                         (default 16)
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define DEPTH 6 /* task tree depth (taskbench) */

static int nthreads;
static int delaylength;       /* delay() iterations for sync/task tests */
static int sched_delaylength; /* delay() iterations for schedule tests */
static int itersperthr = 1024;
static int chunk_n = 16;
static int cksz; /* chunk used by the parametrised schedule tests */
static omp_lock_t lock;

/* ------------------------------------------------------------------------ */
/* Timing: straight clock_gettime so the runtime under test is not involved. */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* EPCC's delay, in delay.c: one object file linked into every binary. */
void delay(int length);

/* Delay length for delay_us. EPCC grows the length by 10% until a call takes
 * delay_us, which on a shared 2-core VM is easily fooled by one preemption
 * (two calibrations differed 2x). Instead: cost per iteration from the
 * fastest of 50 long calls (~20 us each), scaled linearly. */
static int calibrate_delay(double delay_us) {
    const int L = 20000;
    double best = 1e30;
    delay(L);
    for (int t = 0; t < 50; t++) {
        double t0 = now();
        delay(L);
        double d = now() - t0;
        if (d < best)
            best = d;
    }
    int len = (int)(delay_us * 1e-6 / (best / L) + 0.5);
    return len < 1 ? 1 : len;
}

/* ------------------------------------------------------------------------ */
/* Reference loops. */
static void refer(long reps) {
    for (long j = 0; j < reps; j++)
        delay(delaylength);
}

static void refer_atom(long reps) {
    double aaaa = 0.0, epsilon = 1.0e-15, b = 1.0, c = 1.0 + epsilon;
    for (long j = 0; j < reps; j++) {
        aaaa += b;
        b *= c;
    }
    if (aaaa < 0.0)
        printf("%f\n", aaaa);
}

static void refer_red(long reps) {
    int aaaa = 0;
    for (long j = 0; j < reps; j++) {
        delay(delaylength);
        aaaa += 1;
    }
    if (aaaa < 0)
        printf("%d\n", aaaa);
}

static void refer_sched(long reps) {
    for (long j = 0; j < reps; j++)
        for (int i = 0; i < itersperthr; i++)
            delay(sched_delaylength);
}

/* ------------------------------------------------------------------------ */
/* syncbench */
static void test_parallel(long reps) {
    for (long j = 0; j < reps; j++) {
#pragma omp parallel
        delay(delaylength);
    }
}

static void test_for(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp for
            for (int i = 0; i < nthreads; i++)
                delay(delaylength);
        }
    }
}

static void test_parallel_for(long reps) {
    for (long j = 0; j < reps; j++) {
#pragma omp parallel for
        for (int i = 0; i < nthreads; i++)
            delay(delaylength);
    }
}

static void test_barrier(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
            delay(delaylength);
#pragma omp barrier
        }
    }
}

static void test_single(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp single
            delay(delaylength);
        }
    }
}

static void test_critical(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps / nthreads; j++) {
#pragma omp critical
            delay(delaylength);
        }
    }
}

static void test_lock(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps / nthreads; j++) {
            omp_set_lock(&lock);
            delay(delaylength);
            omp_unset_lock(&lock);
        }
    }
}

static void test_atomic(long reps) {
    double aaaa = 0.0, epsilon = 1.0e-15, c = 1.0 + epsilon;
#pragma omp parallel
    {
        double b = 1.0;
        for (long j = 0; j < reps / nthreads; j++) {
#pragma omp atomic
            aaaa += b;
            b *= c;
        }
    }
    if (aaaa < 0.0)
        printf("%f\n", aaaa);
}

static void test_reduction(long reps) {
    int aaaa = 0;
    for (long j = 0; j < reps; j++) {
#pragma omp parallel reduction(+ : aaaa)
        {
            delay(delaylength);
            aaaa += 1;
        }
    }
    if (aaaa != (int)(reps * nthreads))
        fprintf(stderr, "REDUCTION: wrong result %d, expected %ld\n", aaaa,
                reps * nthreads), exit(3);
}

static void test_ordered(long reps) {
#pragma omp parallel for schedule(static, 1) ordered
    for (long j = 0; j < reps; j++) {
#pragma omp ordered
        delay(delaylength);
    }
}

/* ------------------------------------------------------------------------ */
/* schedbench: overhead per loop of itersperthr * nthreads iterations */
static void test_static(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp for schedule(static)
            for (int i = 0; i < itersperthr * nthreads; i++)
                delay(sched_delaylength);
        }
    }
}

static void test_static_n(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp for schedule(static, cksz)
            for (int i = 0; i < itersperthr * nthreads; i++)
                delay(sched_delaylength);
        }
    }
}

static void test_dynamic_n(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp for schedule(dynamic, cksz)
            for (int i = 0; i < itersperthr * nthreads; i++)
                delay(sched_delaylength);
        }
    }
}

static void test_guided_n(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp for schedule(guided, cksz)
            for (int i = 0; i < itersperthr * nthreads; i++)
                delay(sched_delaylength);
        }
    }
}

/* EPCC 4.0 taskloop: one task per cksz iterations, generated by the master */
static void test_taskloop_n(long reps) {
#pragma omp parallel
    {
#pragma omp master
        {
            for (long j = 0; j < reps; j++) {
#pragma omp taskloop num_tasks((itersperthr * nthreads) / cksz)
                for (long i = 0; i < (long)itersperthr * nthreads; i++)
                    delay(sched_delaylength);
            }
        }
    }
}

/* ------------------------------------------------------------------------ */
/* taskbench */
static void test_parallel_task(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp task
            delay(delaylength);
        }
    }
}

static void test_master_task(long reps) {
#pragma omp parallel
    {
#pragma omp master
        {
            for (long j = 0; j < reps * nthreads; j++) {
#pragma omp task
                delay(delaylength);
            }
        }
    }
}

static void test_master_task_busy(long reps) {
#pragma omp parallel
    {
        int me = omp_get_thread_num();
        for (long j = 0; j < reps; j++) {
            if (me == 0) {
#pragma omp task
                delay(delaylength);
            } else {
                delay(delaylength);
            }
        }
    }
}

static volatile int false_flag = 0;

static void test_conditional_task(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp task if (false_flag)
            delay(delaylength);
        }
    }
}

static void test_task_wait(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp task
            delay(delaylength);
#pragma omp taskwait
        }
    }
}

static void test_task_barrier(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps; j++) {
#pragma omp task
            delay(delaylength);
#pragma omp barrier
        }
    }
}

static void test_nested_task(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < reps / nthreads; j++) {
#pragma omp task
            {
                for (int i = 0; i < nthreads; i++) {
#pragma omp task untied
                    delay(delaylength);
                }
#pragma omp taskwait
            }
        }
    }
}

static void test_nested_master_task(long reps) {
#pragma omp parallel
    {
#pragma omp master
        {
            for (long j = 0; j < reps; j++) {
#pragma omp task
                {
                    for (int i = 0; i < nthreads; i++) {
#pragma omp task
                        delay(delaylength);
                    }
#pragma omp taskwait
                }
            }
        }
    }
}

static void branch_task_tree(int level) {
    if (level > 0) {
#pragma omp task
        {
            branch_task_tree(level - 1);
            branch_task_tree(level - 1);
            delay(delaylength);
        }
    }
}

static void test_branch_task_tree(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < (reps >> DEPTH); j++) {
#pragma omp task
            {
                branch_task_tree(DEPTH);
                delay(delaylength);
            }
        }
    }
}

static void leaf_task_tree(int level) {
    if (level == 0) {
        delay(delaylength);
    } else {
#pragma omp task
        {
            leaf_task_tree(level - 1);
            leaf_task_tree(level - 1);
        }
    }
}

static void test_leaf_task_tree(long reps) {
#pragma omp parallel
    {
        for (long j = 0; j < (reps >> DEPTH); j++)
            leaf_task_tree(DEPTH);
    }
}

/* Task throughput (not EPCC): microseconds per task / per iteration / per
 * fib(30), with no delay work, so the reference is empty. */
static void refer_none(long reps) { (void)reps; }

/* One thread creates `reps` empty tasks; the others run them. */
static void test_flat_tasks(long reps) {
#pragma omp parallel
#pragma omp single
    for (long j = 0; j < reps; j++) {
#pragma omp task
        {
            __asm__ __volatile__("" ::: "memory"); /* an empty task gcc cannot drop */
        }
    }
}

/* A chain of `reps` tasks on one address, generated by one thread. */
static void test_dep_chain(long reps) {
    long x = 0;
#pragma omp parallel
#pragma omp single
    for (long j = 0; j < reps; j++) {
#pragma omp task depend(inout : x) shared(x)
        x++;
    }
    if (x != reps) {
        fprintf(stderr, "DEP_CHAIN: x=%ld, expected %ld\n", x, reps);
        exit(5);
    }
}

/* taskloop grainsize(1): `reps` iterations, one task each. */
static void test_taskloop_g1(long reps) {
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(1)
    for (long j = 0; j < reps; j++) {
        __asm__ __volatile__("" ::: "memory");
    }
}

static long fib_untied(int n) {
    if (n < 2)
        return n;
    long a, b;
#pragma omp task untied shared(a)
    a = fib_untied(n - 1);
#pragma omp task untied shared(b)
    b = fib_untied(n - 2);
#pragma omp taskwait
    return a + b;
}

static long fib_tied(int n) {
    if (n < 2)
        return n;
    long a, b;
#pragma omp task shared(a)
    a = fib_tied(n - 1);
#pragma omp task shared(b)
    b = fib_tied(n - 2);
#pragma omp taskwait
    return a + b;
}

static void run_fib(long reps, long (*fib)(int), const char *name) {
    for (long j = 0; j < reps; j++) {
        long r = 0;
#pragma omp parallel
#pragma omp single
        r = fib(30);
        if (r != 832040) {
            fprintf(stderr, "%s: %ld\n", name, r);
            exit(5);
        }
    }
}

static void test_fib_untied(long reps) { run_fib(reps, fib_untied, "FIB_30_UNTIED"); }
static void test_fib_tied(long reps) { run_fib(reps, fib_tied, "FIB_30"); }

/* SORT (a coarse-grained task program, as BOTS sort): a task mergesort of 2^20 longs, halves
 * sorted as two tasks down to 4096 elements (then qsort), merged after a taskwait. Microseconds
 * per sort; the reference fills the array, as the test does before each sort. */
#define SORT_N (1L << 20)
#define SORT_CUTOFF 4096
static long *sort_a, *sort_tmp;

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void sort_fill(long seed) {
    if (!sort_a) {
        sort_a = malloc(SORT_N * sizeof(long));
        sort_tmp = malloc(SORT_N * sizeof(long));
        if (!sort_a || !sort_tmp) {
            fprintf(stderr, "SORT: out of memory\n");
            exit(4);
        }
    }
    unsigned long x = 88172645463325252UL + (unsigned long)seed;
    for (long i = 0; i < SORT_N; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        sort_a[i] = (long)(x >> 1);
    }
}

static void msort(long *a, long *tmp, long n) {
    if (n <= SORT_CUTOFF) {
        qsort(a, n, sizeof(long), cmp_long);
        return;
    }
    long h = n / 2;
#pragma omp task
    msort(a, tmp, h);
#pragma omp task
    msort(a + h, tmp + h, n - h);
#pragma omp taskwait
    long i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof(long));
}

static void refer_sort(long reps) {
    for (long j = 0; j < reps; j++)
        sort_fill(j);
}

static void test_sort(long reps) {
    for (long j = 0; j < reps; j++) {
        sort_fill(j);
#pragma omp parallel
#pragma omp single
        msort(sort_a, sort_tmp, SORT_N);
        for (long i = 1; i < SORT_N; i++)
            if (sort_a[i - 1] > sort_a[i]) {
                fprintf(stderr, "SORT: not sorted at %ld\n", i);
                exit(5);
            }
    }
}

/* ------------------------------------------------------------------------ */
typedef void (*loop_fn)(long reps);

struct bench {
    const char *name;
    loop_fn test;
    loop_fn ref;
    int chunk;   /* >0: value of cksz for this test; -1: chunk_n */
    int granule; /* 0: nthreads; else innerreps is a multiple of this */
};

static const struct bench benches[] = {
    /* syncbench */
    {"PARALLEL", test_parallel, refer, 0, 1},
    {"FOR", test_for, refer, 0, 1},
    {"PARALLEL_FOR", test_parallel_for, refer, 0, 1},
    {"BARRIER", test_barrier, refer, 0, 1},
    {"SINGLE", test_single, refer, 0, 1},
    {"CRITICAL", test_critical, refer, 0, 0},
    {"LOCK", test_lock, refer, 0, 0},
    {"ATOMIC", test_atomic, refer_atom, 0, 0},
    {"REDUCTION", test_reduction, refer_red, 0, 1},
    {"ORDERED", test_ordered, refer, 0, 1},
    /* schedbench (us per loop) */
    {"STATIC", test_static, refer_sched, 0, 1},
    {"STATIC_N", test_static_n, refer_sched, -1, 1},
    {"DYNAMIC_1", test_dynamic_n, refer_sched, 1, 1},
    {"DYNAMIC_16", test_dynamic_n, refer_sched, 16, 1},
    {"GUIDED_1", test_guided_n, refer_sched, 1, 1},
    {"TASKLOOP_1", test_taskloop_n, refer_sched, 1, 1},
    /* taskbench */
    {"PARALLEL_TASK", test_parallel_task, refer, 0, 1},
    {"MASTER_TASK", test_master_task, refer, 0, 1},
    {"MASTER_TASK_BUSY", test_master_task_busy, refer, 0, 1},
    {"CONDITIONAL_TASK", test_conditional_task, refer, 0, 1},
    {"TASK_WAIT", test_task_wait, refer, 0, 1},
    {"TASK_BARRIER", test_task_barrier, refer, 0, 1},
    {"NESTED_TASK", test_nested_task, refer, 0, 0},
    {"NESTED_MASTER_TASK", test_nested_master_task, refer, 0, 1},
    {"BRANCH_TASK_TREE", test_branch_task_tree, refer, 0, 1 << DEPTH},
    {"LEAF_TASK_TREE", test_leaf_task_tree, refer, 0, 1 << DEPTH},
    /* task throughput (us per task, per iteration, per fib(30), per sort) */
    {"FLAT_TASKS", test_flat_tasks, refer_none, 0, 1},
    {"DEP_CHAIN", test_dep_chain, refer_none, 0, 1},
    {"TASKLOOP_G1", test_taskloop_g1, refer_none, 0, 1},
    {"FIB_30", test_fib_tied, refer_none, 0, 1},
    {"FIB_30_UNTIED", test_fib_untied, refer_none, 0, 1},
    {"SORT", test_sort, refer_sort, 0, 1},
};
#define NBENCH ((int)(sizeof benches / sizeof benches[0]))

static double env_double(const char *name, double dflt) {
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    double v = strtod(s, &end);
    if (*end || v <= 0) {
        fprintf(stderr, "overhead: bad %s=%s\n", name, s);
        exit(2);
    }
    return v;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long round_reps(long reps, long granule) {
    if (reps < granule)
        return granule;
    return (reps + granule - 1) / granule * granule;
}

static double time_fn(loop_fn f, long reps) {
    double t0 = now();
    f(reps);
    return now() - t0;
}

static void run(const struct bench *b, int outer, double target_s) {
    long granule = b->granule ? b->granule : nthreads;
    cksz = b->chunk > 0 ? b->chunk : (b->chunk < 0 ? chunk_n : 1);

    /* Calibrate innerreps (EPCC getinnerreps, without its up-to-2x overshoot):
     * double until a run takes a quarter of the target, then scale. */
    long reps = granule;
    long tested = 0; /* repetitions of the construct in this process, calibration included */
    double t;
    for (;;) {
        t = time_fn(b->test, reps);
        tested += reps;
        if (t >= target_s / 4 || reps > (1L << 40))
            break;
        reps *= 2;
    }
    if (t < target_s)
        reps = round_reps((long)(reps * (target_s / t)), granule);
    if (reps <= 0 || reps > (1L << 40)) {
        fprintf(stderr, "%s: calibration failed (reps=%ld)\n", b->name, reps);
        exit(4);
    }

    double *ovh = malloc(sizeof(double) * (outer + 1));
    for (int k = 0; k <= outer; k++) { /* k == 0: warm-up, discarded */
        double tr = time_fn(b->ref, reps);
        double tt = time_fn(b->test, reps);
        tested += reps;
        ovh[k] = (tt - tr) * 1e6 / (double)reps;
    }
    qsort(ovh + 1, outer, sizeof(double), cmp_double);
    double med = outer % 2 ? ovh[1 + outer / 2]
                           : 0.5 * (ovh[outer / 2] + ovh[1 + outer / 2]);
    fprintf(stderr, "# %-18s innerreps=%ld tested=%ld\n", b->name, reps, tested);
    printf("%s %.6f %.6f %.6f\n", b->name, med, ovh[1], ovh[outer]);
    fflush(stdout);
    free(ovh);
}

int main(int argc, char **argv) {
    if (argc > 1 && (!strcmp(argv[1], "--list") || !strcmp(argv[1], "-h") ||
                     !strcmp(argv[1], "--help"))) {
        if (strcmp(argv[1], "--list"))
            printf("usage: %s [CONSTRUCT...]  (env OVH_OUTER, OVH_TIME_MS, "
                   "OVH_DELAY_US, OVH_SCHED_DELAY_US, OVH_ITERSPERTHR, "
                   "OVH_CHUNK)\nconstructs:\n",
                   argv[0]);
        for (int i = 0; i < NBENCH; i++)
            printf("%s\n", benches[i].name);
        return 0;
    }
    /* Validate names before spending any time. */
    int *sel = calloc(NBENCH, sizeof(int));
    for (int a = 1; a < argc; a++) {
        int found = 0;
        for (int i = 0; i < NBENCH; i++)
            if (!strcasecmp(argv[a], benches[i].name))
                sel[i] = found = 1;
        if (!found) {
            fprintf(stderr, "overhead: unknown construct '%s' (try --list)\n",
                    argv[a]);
            return 2;
        }
    }

    int outer = (int)env_double("OVH_OUTER", 20);
    double target_s = env_double("OVH_TIME_MS", 100) * 1e-3;
    double delay_us = env_double("OVH_DELAY_US", 0.1);
    double sched_delay_us = env_double("OVH_SCHED_DELAY_US", 0.1);
    itersperthr = (int)env_double("OVH_ITERSPERTHR", 1024);
    chunk_n = (int)env_double("OVH_CHUNK", 16);

#pragma omp parallel
    {
#pragma omp master
        nthreads = omp_get_num_threads();
    }
    omp_init_lock(&lock);
    delaylength = calibrate_delay(delay_us);
    sched_delaylength = calibrate_delay(sched_delay_us);
    fprintf(stderr,
            "# threads=%d outer=%d target=%.0fms delay=%.3gus(len %d) "
            "sched_delay=%.3gus(len %d) itersperthr=%d chunk_n=%d\n",
            nthreads, outer, target_s * 1e3, delay_us, delaylength,
            sched_delay_us, sched_delaylength, itersperthr, chunk_n);

    for (int i = 0; i < NBENCH; i++)
        if (argc == 1 || sel[i])
            run(&benches[i], outer, target_s);

    omp_destroy_lock(&lock);
    free(sel);
    return 0;
}
