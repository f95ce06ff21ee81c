// The OMPT callbacks of tasks, synchronisation regions and mutexes, as a tool in the program
// sees them: task creation (flags, dependences), the task switches of each thread (a task runs
// between the switch into it and its completion, nested as the thread's stack of tasks),
// detach events, every kind of barrier, taskwait, taskgroup, reductions, critical, locks,
// nestable locks and ordered. Sequences on the initial thread are exact; in a team of several
// threads each thread's switches must nest and every task must be created once, started once
// and completed once.
// oxiomp-test: threads=none
// oxiomp-test: gcc=skip: an OMPT tool (omp-tools.h), libomp's tool interface
#include <omp-tools.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

enum {
    CREATE = 1, SCHEDULE, DEPS, SYNC_B, SYNC_E, WAIT_B, WAIT_E, RED_B, RED_E,
    ACQUIRE, ACQUIRED, RELEASED, INIT, DESTROY, NEST_B, NEST_E, MARK
};
static const char *names[] = {"?", "create", "schedule", "dependences", "sync_begin", "sync_end", "wait_begin",
                              "wait_end", "reduction_begin", "reduction_end", "acquire", "acquired", "released",
                              "lock_init", "lock_destroy", "nest_begin", "nest_end", "mark"};

#define TOOL_NAME "ompt_tasks"
#define MAX_EV 65536
#include "ompt_record.h"

static ompt_get_task_info_t get_task_info;

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *par, ompt_data_t *task, unsigned size,
                             unsigned index, int flags) {
    (void)par, (void)size, (void)index, (void)flags;
    if (endpoint == ompt_scope_begin)
        task->value = 1000000 + fresh();
}
static void on_task_create(ompt_data_t *parent, const ompt_frame_t *frame, ompt_data_t *task, int flags, int has_deps,
                           const void *ra) {
    (void)frame, (void)ra;
    CHECK(task->value == 0, "a new task's data is not zero");
    task->value = fresh();
    rec(CREATE, val(parent), task->value, ((uint64_t)(unsigned)flags << 1) | (has_deps != 0));
}
static void on_task_schedule(ompt_data_t *prior, ompt_task_status_t status, ompt_data_t *next) {
    rec(SCHEDULE, val(prior), status, val(next));
}
static uint64_t dep_addr[8], dep_kind[8];
static int dep_n;
static void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int n) {
    pthread_mutex_lock(&mu);
    dep_n = n;
    for (int i = 0; i < n && i < 8; i++) {
        dep_addr[i] = (uint64_t)(uintptr_t)deps[i].variable.ptr;
        dep_kind[i] = deps[i].dependence_type;
    }
    pthread_mutex_unlock(&mu);
    rec(DEPS, val(task), (uint64_t)n, 0);
}
static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *par,
                           ompt_data_t *task, const void *ra) {
    (void)ra;
    rec(endpoint == ompt_scope_begin ? SYNC_B : SYNC_E, kind, val(task), par != NULL);
}
static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *par,
                                ompt_data_t *task, const void *ra) {
    (void)ra;
    rec(endpoint == ompt_scope_begin ? WAIT_B : WAIT_E, kind, val(task), par != NULL);
}
static void on_reduction(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *par, ompt_data_t *task,
                         const void *ra) {
    (void)ra, (void)par;
    rec(endpoint == ompt_scope_begin ? RED_B : RED_E, kind, val(task), 0);
}
static void on_mutex_acquire(ompt_mutex_t kind, unsigned hint, unsigned impl, ompt_wait_id_t id, const void *ra) {
    (void)hint, (void)impl, (void)ra;
    rec(ACQUIRE, kind, id, 0);
}
static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t id, const void *ra) {
    (void)ra;
    rec(ACQUIRED, kind, id, 0);
}
static void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t id, const void *ra) {
    (void)ra;
    rec(RELEASED, kind, id, 0);
}
static void on_lock_init(ompt_mutex_t kind, unsigned hint, unsigned impl, ompt_wait_id_t id, const void *ra) {
    (void)hint, (void)impl, (void)ra;
    rec(INIT, kind, id, 0);
}
static void on_lock_destroy(ompt_mutex_t kind, ompt_wait_id_t id, const void *ra) {
    (void)ra;
    rec(DESTROY, kind, id, 0);
}
static void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t id, const void *ra) {
    (void)ra;
    rec(endpoint == ompt_scope_begin ? NEST_B : NEST_E, ompt_mutex_nest_lock, id, 0);
}

static int tool_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data) {
    (void)device, (void)tool_data;
    ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
    get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
    callback_t cbs[] = {
        {ompt_callback_thread_begin, (ompt_callback_t)number_thread},
        {ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task},
        {ompt_callback_task_create, (ompt_callback_t)on_task_create},
        {ompt_callback_task_schedule, (ompt_callback_t)on_task_schedule},
        {ompt_callback_dependences, (ompt_callback_t)on_dependences},
        {ompt_callback_sync_region, (ompt_callback_t)on_sync_region},
        {ompt_callback_sync_region_wait, (ompt_callback_t)on_sync_region_wait},
        {ompt_callback_reduction, (ompt_callback_t)on_reduction},
        {ompt_callback_mutex_acquire, (ompt_callback_t)on_mutex_acquire},
        {ompt_callback_mutex_acquired, (ompt_callback_t)on_mutex_acquired},
        {ompt_callback_mutex_released, (ompt_callback_t)on_mutex_released},
        {ompt_callback_lock_init, (ompt_callback_t)on_lock_init},
        {ompt_callback_lock_destroy, (ompt_callback_t)on_lock_destroy},
        {ompt_callback_nest_lock, (ompt_callback_t)on_nest_lock},
    };
    return register_all(set_callback, cbs, sizeof cbs / sizeof cbs[0]);
}

/// Marks the start of a section of the event list (returns its index).
static int mark(void) {
    rec(MARK, 0, 0, 0);
    return nev;
}

/// The current task's data (as the tool set it).
static uint64_t me_task(void) {
    ompt_data_t *d = NULL;
    CHECK(get_task_info(0, NULL, &d, NULL, NULL, NULL) == 2, "get_task_info(0)");
    return val(d);
}

/// Checks that events [from, nev) of the calling thread have the kinds `want` (0-terminated),
/// and returns the index of the first.
static int expect(const char *what, int from, const int *want) {
    uint64_t t = val(get_thread_data());
    int got[128], n = 0, first = -1;
    for (int i = from; i < nev && n < 128; i++)
        if (evs[i].thread == t && evs[i].kind != MARK) {
            if (first < 0)
                first = i;
            got[n++] = evs[i].kind;
        }
    int nw = 0;
    while (want[nw])
        nw++;
    int ok = n == nw;
    for (int i = 0; ok && i < n; i++)
        ok = got[i] == want[i];
    if (!ok) {
        fprintf(stderr, "ompt_tasks: %s: recorded:", what);
        for (int i = 0; i < n; i++)
            fprintf(stderr, " %s", names[got[i]]);
        fprintf(stderr, "\n  expected:");
        for (int i = 0; i < nw; i++)
            fprintf(stderr, " %s", names[want[i]]);
        fprintf(stderr, "\n");
        failures++;
    }
    return first;
}

/// A task run on the initial thread from its creation to its end: create (with the current
/// task as parent and `flags` among its flags), switch into it, its end, back to the parent.
static void check_task_life(const char *what, int at, uint64_t parent, int flags) {
    if (at < 0)
        return;
    ev_t *c = &evs[at], *s = &evs[at + 1], *e = &evs[at + 2];
    CHECK(c->a == parent && ((c->c >> 1) & flags) == (uint64_t)flags && ((c->c >> 1) & ompt_task_explicit),
          "%s: created by %lu (parent %lu), flags %#lx", what, (unsigned long)c->a, (unsigned long)parent,
          (unsigned long)(c->c >> 1));
    CHECK(s->a == parent && s->b == ompt_task_switch && s->c == c->b, "%s: the switch into it", what);
    CHECK(e->a == c->b && e->b == ompt_task_complete && e->c == parent, "%s: its completion", what);
}

static int lock_kinds[] = {INIT, ACQUIRE, ACQUIRED, RELEASED, ACQUIRE, ACQUIRED, RELEASED, DESTROY, 0};

int main(void) {
    int x = 0, y = 0;
    uint64_t init = me_task();
    CHECK(init != 0, "the initial task has no data");

    // Tasks of the initial thread (a team of one: each runs at once).
    int m = mark();
#pragma omp task shared(x)
    x++;
    int plain[] = {CREATE, SCHEDULE, SCHEDULE, 0};
    check_task_life("a task", expect("a task", m, plain), init, 0);

    m = mark();
#pragma omp task if (0) shared(x)
    x++;
    check_task_life("an if(0) task", expect("an if(0) task", m, plain), init, ompt_task_undeferred);

    // An untied task: libomp tells each of its parts (more switches between its start and its
    // end); this runtime runs the parts in one go.
    m = mark();
#pragma omp task untied shared(x)
    x++;
    {
        uint64_t t = val(get_thread_data());
        int at[16], n = 0;
        for (int i = m; i < nev && n < 16; i++)
            if (evs[i].thread == t && evs[i].kind != MARK)
                at[n++] = i;
        CHECK(n >= 3 && evs[at[0]].kind == CREATE, "an untied task: %d events", n);
        if (n >= 3) {
            uint64_t task = evs[at[0]].b;
            ev_t *first = &evs[at[1]], *last = &evs[at[n - 1]];
            CHECK((evs[at[0]].c >> 1) & ompt_task_untied, "an untied task's flags");
            CHECK(first->kind == SCHEDULE && first->a == init && first->b == ompt_task_switch && first->c == task,
                  "the switch into an untied task");
            CHECK(last->kind == SCHEDULE && last->a == task && last->b == ompt_task_complete && last->c == init,
                  "an untied task's completion");
            for (int k = 2; k < n - 1; k++)
                CHECK(evs[at[k]].kind == SCHEDULE && evs[at[k]].b == ompt_task_switch, "an untied task's part %d", k);
        }
    }

    m = mark();
#pragma omp task final(1) shared(x)
    {
#pragma omp task shared(x)
        x++;
    }
    int nested[] = {CREATE, SCHEDULE, CREATE, SCHEDULE, SCHEDULE, SCHEDULE, 0};
    int f = expect("a final task and its included child", m, nested);
    if (f >= 0) {
        CHECK((evs[f].c >> 1) & ompt_task_final, "the final task's flags");
        CHECK(evs[f + 2].a == evs[f].b && ((evs[f + 2].c >> 1) & ompt_task_undeferred), "the included task");
    }

    m = mark();
#pragma omp task depend(out : x) depend(in : y) shared(x, y)
    x += y;
    int with_deps[] = {CREATE, DEPS, SCHEDULE, SCHEDULE, 0};
    f = expect("a task with dependences", m, with_deps);
    if (f >= 0) {
        CHECK((evs[f].c & 1) && evs[f + 1].a == evs[f].b && evs[f + 1].b == 2, "has_dependences, and 2 of them");
        // clang passes `out` with `inout`'s flags: a runtime tells it as `inout`.
        CHECK(dep_n == 2 && dep_addr[0] == (uint64_t)(uintptr_t)&x && dep_kind[0] == ompt_dependence_type_inout &&
                  dep_addr[1] == (uint64_t)(uintptr_t)&y && dep_kind[1] == ompt_dependence_type_in,
              "the dependences");
    }
    m = mark();
#pragma omp task depend(inout : x) shared(x)
    x++;
    f = expect("a task with an inout dependence", m, with_deps);
    if (f >= 0)
        CHECK(dep_n == 1 && dep_addr[0] == (uint64_t)(uintptr_t)&x && dep_kind[0] == ompt_dependence_type_inout,
              "the inout dependence: %d, kind %d", dep_n, dep_n ? (int)dep_kind[0] : -1);

    m = mark();
#pragma omp taskwait
    int taskwait[] = {SYNC_B, WAIT_B, WAIT_E, SYNC_E, 0};
    f = expect("taskwait", m, taskwait);
    if (f >= 0)
        CHECK(evs[f].a == ompt_sync_region_taskwait && evs[f].b == init, "taskwait's kind and task");

    m = mark();
#pragma omp taskgroup
    {
#pragma omp task shared(x)
        x++;
    }
    int taskgroup[] = {SYNC_B, CREATE, SCHEDULE, SCHEDULE, WAIT_B, WAIT_E, SYNC_E, 0};
    f = expect("taskgroup", m, taskgroup);
    if (f >= 0)
        CHECK(evs[f].a == ompt_sync_region_taskgroup && evs[f + 6].a == ompt_sync_region_taskgroup, "taskgroup's kind");

    // A detachable task: its event fulfilled by a later task, before or after its body ends.
    m = mark();
    omp_event_handle_t ev = (omp_event_handle_t)0;
#pragma omp task detach(ev) shared(x)
    x++;
#pragma omp task shared(ev)
    omp_fulfill_event(ev);
#pragma omp taskwait
    {
        uint64_t detached = 0;
        int early = 0, late = 0, detach = 0, complete = 0;
        for (int i = m; i < nev; i++) {
            if (evs[i].kind == CREATE && !detached)
                detached = evs[i].b;
            if (evs[i].kind == SCHEDULE && evs[i].a == detached) {
                early += evs[i].b == ompt_task_early_fulfill;
                late += evs[i].b == ompt_task_late_fulfill;
                detach += evs[i].b == ompt_task_detach;
                complete += evs[i].b == ompt_task_complete;
            }
        }
        CHECK((early == 1 && complete == 1 && !late && !detach) || (late == 1 && detach == 1 && !early && !complete),
              "a detached task's events: early %d complete %d late %d detach %d", early, complete, late, detach);
    }

    // Mutexes.
    static omp_lock_t lock;
    m = mark();
    omp_init_lock(&lock);
    omp_set_lock(&lock);
    omp_unset_lock(&lock);
    CHECK(omp_test_lock(&lock), "test_lock");
    omp_unset_lock(&lock);
    omp_destroy_lock(&lock);
    f = expect("a lock", m, lock_kinds);
    if (f >= 0) {
        int want_kind[] = {ompt_mutex_lock, ompt_mutex_lock, ompt_mutex_lock, ompt_mutex_lock, ompt_mutex_test_lock,
                           ompt_mutex_test_lock, ompt_mutex_lock, ompt_mutex_lock};
        for (int i = 0; i < 8; i++)
            CHECK(evs[f + i].a == (uint64_t)want_kind[i] && evs[f + i].b == evs[f].b, "lock event %d: kind %lu", i,
                  (unsigned long)evs[f + i].a);
    }

    static omp_nest_lock_t nest;
    m = mark();
    omp_init_nest_lock(&nest);
    omp_set_nest_lock(&nest);
    omp_set_nest_lock(&nest);
    omp_unset_nest_lock(&nest);
    omp_unset_nest_lock(&nest);
    omp_destroy_nest_lock(&nest);
    int nest_kinds[] = {INIT, ACQUIRE, ACQUIRED, ACQUIRE, NEST_B, NEST_E, RELEASED, DESTROY, 0};
    f = expect("a nestable lock", m, nest_kinds);
    if (f >= 0)
        for (int i = 0; i < 8; i++)
            CHECK(evs[f + i].a == ompt_mutex_nest_lock && evs[f + i].b == evs[f].b, "nest lock event %d", i);

    m = mark();
#pragma omp critical
    x++;
    int critical[] = {ACQUIRE, ACQUIRED, RELEASED, 0};
    f = expect("critical", m, critical);
    if (f >= 0)
        CHECK(evs[f].a == ompt_mutex_critical && evs[f + 2].a == ompt_mutex_critical && evs[f].b == evs[f + 2].b,
              "critical's kind and wait id");

    // Barriers, ordered and a reduction in a team of one (deterministic).
    int bm = -1, wm = -1, om = -1, rm = -1, be = -1, we = -1, oe = -1, re = -1, s = 0;
#pragma omp parallel num_threads(1) reduction(+ : s)
    {
        bm = mark();
#pragma omp barrier
        be = nev;
        wm = mark();
#pragma omp for
        for (int i = 0; i < 4; i++)
            s += i;
        we = nev;
        om = mark();
#pragma omp for ordered
        for (int i = 0; i < 2; i++) {
#pragma omp ordered
            s += i;
        }
        oe = nev;
        rm = mark();
    }
    (void)be, (void)we, (void)oe, (void)re;
    CHECK(s == 7, "s = %d", s);
    // The region's events are the initial thread's: check them in order by hand.
    {
        uint64_t t = val(get_thread_data());
        int kinds[64], at[64], n = 0;
        for (int i = bm; i < nev && n < 64; i++)
            if (evs[i].thread == t && evs[i].kind != MARK && i < be) {
                at[n] = i;
                kinds[n++] = evs[i].kind;
            }
        CHECK(n == 4 && kinds[0] == SYNC_B && evs[at[0]].a == ompt_sync_region_barrier_explicit && kinds[3] == SYNC_E,
              "an explicit barrier (%d events)", n);
        n = 0;
        for (int i = wm; i < we; i++)
            if (evs[i].thread == t && evs[i].kind == SYNC_B)
                kinds[n++] = (int)evs[i].a;
        CHECK(n == 1 && kinds[0] == ompt_sync_region_barrier_implicit_workshare, "a loop's barrier (%d, kind %d)", n,
              n ? kinds[0] : -1);
        int acq = 0, acqd = 0, rel = 0;
        for (int i = om; i < oe; i++)
            if (evs[i].thread == t && evs[i].a == ompt_mutex_ordered) {
                acq += evs[i].kind == ACQUIRE;
                acqd += evs[i].kind == ACQUIRED;
                rel += evs[i].kind == RELEASED;
            }
        CHECK(acq == 2 && acqd == 2 && rel == 2, "ordered: %d %d %d", acq, acqd, rel);
        int rb = 0, rend = 0;
        for (int i = rm; i < nev; i++)
            if (evs[i].thread == t) {
                rb += evs[i].kind == RED_B && evs[i].a == ompt_sync_region_reduction;
                rend += evs[i].kind == RED_E && evs[i].a == ompt_sync_region_reduction;
            }
        CHECK(rb == 1 && rend == 1, "the reduction: %d begin(s), %d end(s)", rb, rend);
    }

    // Many tasks in a team of several threads: each created once, started once, completed once,
    // and each thread's switches nest (a stack of tasks per thread).
    int from = mark();
    int count = 0;
#pragma omp parallel num_threads(4)
    {
#pragma omp single
        for (int i = 0; i < 200; i++) {
#pragma omp task shared(count)
            {
#pragma omp task shared(count)
                __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
                if (i % 3 == 0) {
#pragma omp taskwait
                }
            }
        }
    }
    CHECK(count == 200, "count %d", count);
    pthread_mutex_lock(&mu);
    int to = nev;
    pthread_mutex_unlock(&mu);
    static uint64_t created[1024], started[1024], completed[1024];
    int ncreated = 0;
    for (int i = from; i < to; i++)
        if (evs[i].kind == CREATE && ncreated < 1024)
            created[ncreated++] = evs[i].b;
    CHECK(ncreated == 400, "%d tasks created", ncreated);
    // Task ids are fresh numbers: index them by position in `created`.
    for (int i = from; i < to; i++) {
        if (evs[i].kind != SCHEDULE)
            continue;
        for (int k = 0; k < ncreated; k++) {
            if (evs[i].b == ompt_task_switch && evs[i].c == created[k])
                started[k]++;
            if (evs[i].b == ompt_task_complete && evs[i].a == created[k])
                completed[k]++;
        }
    }
    for (int k = 0; k < ncreated; k++)
        CHECK(started[k] == 1 && completed[k] == 1, "task %d: started %lu, completed %lu", k,
              (unsigned long)started[k], (unsigned long)completed[k]);
    // Each thread's stack of tasks: a switch pushes the next task (from the one on top), a
    // completion pops the task on top and goes back to the one beneath.
    uint64_t threads[16];
    int nthreads = 0;
    for (int i = from; i < to; i++) {
        int seen = 0;
        for (int k = 0; k < nthreads; k++)
            seen |= threads[k] == evs[i].thread;
        if (!seen && nthreads < 16 && evs[i].kind == SCHEDULE)
            threads[nthreads++] = evs[i].thread;
    }
    for (int k = 0; k < nthreads; k++) {
        uint64_t stack[64];
        int depth = 0, bad = 0;
        for (int i = from; i < to && !bad; i++) {
            if (evs[i].thread != threads[k] || evs[i].kind != SCHEDULE)
                continue;
            if (evs[i].b == ompt_task_switch) {
                if (depth > 0 && stack[depth - 1] != evs[i].a)
                    bad = i;
                if (depth == 0)
                    stack[depth++] = evs[i].a;
                if (depth < 64)
                    stack[depth++] = evs[i].c;
            } else if (evs[i].b == ompt_task_complete) {
                if (depth < 2 || stack[depth - 1] != evs[i].a || stack[depth - 2] != evs[i].c)
                    bad = i;
                depth--;
            }
        }
        CHECK(!bad, "thread %lu: a task switch at event %d does not nest", (unsigned long)threads[k], bad);
    }
    if (failures)
        return 1;
    puts("ompt_tasks: ok");
    return 0;
}
