// The split fork gcc emitted before 4.9, written out as that code calls it (gcc 12 no longer
// emits it): GOMP_parallel_start (or a combined loop / sections start), the outlined function
// called by the encountering thread itself, GOMP_parallel_end. Plain regions with and without
// num_threads, nested ones (serialized, then active), every combined loop schedule upward and
// downward, sections, a barrier inside. Exit status 0 when every result holds.
// With the argument "unopened": GOMP_parallel_end without a start (oxiomp reports it and goes
// on; the program then prints "after the unopened end").
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "../c/check.h"

typedef void (*outlined_t)(void *);
void GOMP_parallel_start(outlined_t fn, void *data, unsigned num_threads);
void GOMP_parallel_end(void);
void GOMP_parallel_loop_static_start(outlined_t, void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_dynamic_start(outlined_t, void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_guided_start(outlined_t, void *, unsigned, long, long, long, long);
void GOMP_parallel_loop_runtime_start(outlined_t, void *, unsigned, long, long, long);
void GOMP_parallel_sections_start(outlined_t, void *, unsigned, unsigned);
_Bool GOMP_loop_static_next(long *, long *);
_Bool GOMP_loop_dynamic_next(long *, long *);
_Bool GOMP_loop_guided_next(long *, long *);
_Bool GOMP_loop_runtime_next(long *, long *);
void GOMP_loop_end_nowait(void);
unsigned GOMP_sections_next(void);
void GOMP_sections_end_nowait(void);
void GOMP_barrier(void);

#define N 1000
#define MAXT 64

struct region {
    int seen[MAXT];
    int size, level, in_parallel;
    int after_barrier;
    int inner_size, inner_level, inner_outer_tid;
    int nested;
};

static void plain(void *p) {
    struct region *r = p;
    int t = omp_get_thread_num();
    if (t < MAXT)
        __atomic_fetch_add(&r->seen[t], 1, __ATOMIC_RELAXED);
    if (t == 0) {
        r->size = omp_get_num_threads();
        r->level = omp_get_level();
        r->in_parallel = omp_in_parallel();
    }
    // Everyone's mark is visible after the barrier.
    GOMP_barrier();
    int all = 1;
    for (int i = 0; i < omp_get_num_threads() && i < MAXT; i++)
        if (__atomic_load_n(&r->seen[i], __ATOMIC_RELAXED) != 1)
            all = 0;
    if (!all)
        __atomic_fetch_add(&r->after_barrier, 1, __ATOMIC_RELAXED);
}

static void inner(void *p) {
    struct region *r = p;
    if (omp_get_thread_num() == 0) {
        r->inner_size = omp_get_num_threads();
        r->inner_level = omp_get_level();
        r->inner_outer_tid = omp_get_ancestor_thread_num(1);
    }
}

static void outer(void *p) {
    struct region *r = p;
    if (omp_get_thread_num() != 1)
        return;
    struct region in = {0};
    GOMP_parallel_start(inner, &in, 2);
    inner(&in);
    GOMP_parallel_end();
    r->inner_size = in.inner_size;
    r->inner_level = in.inner_level;
    r->inner_outer_tid = in.inner_outer_tid;
    // Back in the outer region, as its thread 1.
    r->nested = omp_get_level() == 1 && omp_get_thread_num() == 1;
}

struct loop {
    int hits[N];
    _Bool (*next)(long *, long *);
};

static void loop_body(void *p) {
    struct loop *l = p;
    long s, e;
    while (l->next(&s, &e)) {
        if (s < e) {
            for (long i = s; i < e; i++)
                __atomic_fetch_add(&l->hits[i], 1, __ATOMIC_RELAXED);
        } else {
            for (long i = s; i > e; i--)
                __atomic_fetch_add(&l->hits[i], 1, __ATOMIC_RELAXED);
        }
    }
    GOMP_loop_end_nowait();
}

static int once(const int *hits) {
    for (int i = 0; i < N; i++)
        if (hits[i] != 1)
            return 0;
    return 1;
}

static void check_loop(const char *what, _Bool (*next)(long *, long *), int sched, long chunk, int down) {
    static struct loop l;
    memset(&l, 0, sizeof l);
    l.next = next;
    long start = down ? N - 1 : 0, end = down ? -1 : N, incr = down ? -1 : 1;
    switch (sched) {
    case 0:
        GOMP_parallel_loop_static_start(loop_body, &l, 0, start, end, incr, chunk);
        break;
    case 1:
        GOMP_parallel_loop_dynamic_start(loop_body, &l, 0, start, end, incr, chunk);
        break;
    case 2:
        GOMP_parallel_loop_guided_start(loop_body, &l, 0, start, end, incr, chunk);
        break;
    default:
        GOMP_parallel_loop_runtime_start(loop_body, &l, 0, start, end, incr);
        break;
    }
    loop_body(&l);
    GOMP_parallel_end();
    CHECK(what, once(l.hits));
}

struct sections {
    int hits[5];
};

static void sections_body(void *p) {
    struct sections *s = p;
    for (unsigned i = GOMP_sections_next(); i != 0; i = GOMP_sections_next())
        if (i <= 5)
            __atomic_fetch_add(&s->hits[i - 1], 1, __ATOMIC_RELAXED);
    GOMP_sections_end_nowait();
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "unopened") == 0) {
        GOMP_parallel_end();
        puts("after the unopened end");
        return 0;
    }
    int nthreads = omp_get_max_threads();
    if (nthreads > MAXT)
        nthreads = MAXT;

    struct region r = {0};
    GOMP_parallel_start(plain, &r, 0);
    plain(&r);
    GOMP_parallel_end();
    CHECK_EQ("parallel: team size", r.size, nthreads);
    CHECK_EQ("parallel: level inside", r.level, 1);
    CHECK_EQ("parallel: in parallel inside", r.in_parallel, nthreads > 1);
    CHECK_EQ("parallel: a member missed another's mark at the barrier", r.after_barrier, 0);
    int each = 1;
    for (int i = 0; i < nthreads; i++)
        if (r.seen[i] != 1)
            each = 0;
    CHECK("parallel: each thread ran the function once", each);
    CHECK_EQ("after the end: level", omp_get_level(), 0);
    CHECK_EQ("after the end: thread number", omp_get_thread_num(), 0);
    CHECK_EQ("after the end: team size", omp_get_num_threads(), 1);

    struct region three = {0};
    GOMP_parallel_start(plain, &three, 3);
    plain(&three);
    GOMP_parallel_end();
    CHECK_EQ("num_threads(3): team size", three.size, 3);
    CHECK("num_threads(3): each thread once", three.seen[0] == 1 && three.seen[1] == 1 && three.seen[2] == 1);

    // Nested, with one active level: the inner region is serialized.
    omp_set_max_active_levels(1);
    struct region nested = {0};
    GOMP_parallel_start(outer, &nested, 2);
    outer(&nested);
    GOMP_parallel_end();
    CHECK_EQ("nested serialized: inner team size", nested.inner_size, 1);
    CHECK_EQ("nested serialized: inner level", nested.inner_level, 2);
    CHECK_EQ("nested serialized: encountering thread", nested.inner_outer_tid, 1);
    CHECK("nested serialized: back in the outer region", nested.nested);

    // Nested, two active levels: the inner region has its own team.
    omp_set_max_active_levels(2);
    struct region active = {0};
    GOMP_parallel_start(outer, &active, 2);
    outer(&active);
    GOMP_parallel_end();
    CHECK_EQ("nested active: inner team size", active.inner_size, 2);
    CHECK_EQ("nested active: inner level", active.inner_level, 2);
    CHECK_EQ("nested active: encountering thread", active.inner_outer_tid, 1);
    CHECK("nested active: back in the outer region", active.nested);

    check_loop("static loop: each iteration once", GOMP_loop_static_next, 0, 0, 0);
    check_loop("static chunked loop: each iteration once", GOMP_loop_static_next, 0, 7, 0);
    check_loop("static chunked loop downward: each iteration once", GOMP_loop_static_next, 0, 7, 1);
    check_loop("dynamic loop: each iteration once", GOMP_loop_dynamic_next, 1, 5, 0);
    check_loop("dynamic loop downward: each iteration once", GOMP_loop_dynamic_next, 1, 5, 1);
    check_loop("guided loop: each iteration once", GOMP_loop_guided_next, 2, 3, 0);
    check_loop("runtime loop: each iteration once", GOMP_loop_runtime_next, 3, 0, 0);

    struct sections s = {0};
    GOMP_parallel_sections_start(sections_body, &s, 0, 5);
    sections_body(&s);
    GOMP_parallel_end();
    CHECK("sections: each section once",
          s.hits[0] == 1 && s.hits[1] == 1 && s.hits[2] == 1 && s.hits[3] == 1 && s.hits[4] == 1);

    if (failures)
        return 1;
    puts("gomp split fork: ok");
    return 0;
}
