// The OMPT tool interface as a tool in the program sees it (its own `ompt_start_tool`):
// initialization, thread begin/end, parallel regions (active, with a team of one, nested),
// their implicit tasks and closing barriers, and the inquiry functions a tool such as Archer
// needs. Every callback is recorded with the thread's own number (its thread data); the
// sequences are checked after the regions and, for the initial thread's end, in the tool's
// finalizer (which exits with 3 if they are wrong).
// oxiomp-test: threads=none
// oxiomp-test: gcc=skip: an OMPT tool (omp-tools.h), libomp's tool interface
#include <omp-tools.h>
#include <omp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { THREAD_BEGIN = 1, THREAD_END, PAR_BEGIN, PAR_END, IMPL_BEGIN, IMPL_END, SYNC_BEGIN, SYNC_END, WAIT_BEGIN, WAIT_END };
static const char *names[] = {"?", "thread_begin", "thread_end", "parallel_begin", "parallel_end", "implicit_begin",
                              "implicit_end", "sync_begin", "sync_end", "wait_begin", "wait_end"};

typedef struct {
    int kind;
    uint64_t thread;    // the recording thread's number (its thread data)
    uint64_t a, b, c;   // per kind: see the callbacks
    ompt_data_t *p, *q; // parallel data, task data
    uint64_t pv, qv;    // their values as the callback left them
} ev_t;

#define MAX_EV 4096
static ev_t evs[MAX_EV];
static int nev;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 1;
static int failures;

static ompt_set_callback_t set_callback;
static ompt_get_thread_data_t get_thread_data;
static ompt_get_parallel_info_t get_parallel_info;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "ompt_parallel: line %d: check failed: %s: ", __LINE__, #cond);   \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static uint64_t self_id(void) {
    ompt_data_t *d = get_thread_data();
    return d ? d->value : 0;
}

static void rec(int kind, uint64_t a, uint64_t b, uint64_t c, ompt_data_t *p, ompt_data_t *q) {
    uint64_t t = self_id();
    pthread_mutex_lock(&mu);
    if (nev < MAX_EV)
        evs[nev++] = (ev_t){kind, t, a, b, c, p, q, p ? p->value : 0, q ? q->value : 0};
    pthread_mutex_unlock(&mu);
}

static uint64_t fresh(void) { return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED); }

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data) {
    thread_data->value = fresh();
    rec(THREAD_BEGIN, type, 0, 0, NULL, NULL);
}
static void on_thread_end(ompt_data_t *thread_data) { rec(THREAD_END, thread_data->value, 0, 0, NULL, NULL); }

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par, unsigned requested,
                              int flags, const void *ra) {
    (void)frame, (void)ra;
    par->value = 1000 + fresh();
    rec(PAR_BEGIN, requested, (unsigned)flags, par->value, par, task);
}
static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags, const void *ra) {
    (void)ra;
    rec(PAR_END, par->value, (unsigned)flags, 0, par, task);
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *par, ompt_data_t *task, unsigned size,
                             unsigned index, int flags) {
    if (endpoint == ompt_scope_begin) {
        task->value = 2000 + fresh();
        rec(IMPL_BEGIN, index, size, (unsigned)flags, par, task);
    } else {
        rec(IMPL_END, index, size, (unsigned)flags, par, task);
    }
}

static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *par,
                           ompt_data_t *task, const void *ra) {
    (void)ra;
    rec(endpoint == ompt_scope_begin ? SYNC_BEGIN : SYNC_END, kind, task ? task->value : 0, 0, par, task);
}
static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *par,
                                ompt_data_t *task, const void *ra) {
    (void)ra;
    rec(endpoint == ompt_scope_begin ? WAIT_BEGIN : WAIT_END, kind, task ? task->value : 0, 0, par, task);
}

static int initialized;

static int tool_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data) {
    (void)device;
    tool_data->value = 42;
    set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
    get_parallel_info = (ompt_get_parallel_info_t)lookup("ompt_get_parallel_info");
    if (!set_callback || !get_thread_data || !get_parallel_info) {
        fprintf(stderr, "ompt_parallel: an entry point is missing\n");
        _exit(2);
    }
    struct {
        ompt_callbacks_t which;
        ompt_callback_t f;
    } cbs[] = {
        {ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin},
        {ompt_callback_thread_end, (ompt_callback_t)on_thread_end},
        {ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin},
        {ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end},
        {ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task},
        {ompt_callback_sync_region, (ompt_callback_t)on_sync_region},
        {ompt_callback_sync_region_wait, (ompt_callback_t)on_sync_region_wait},
    };
    for (unsigned i = 0; i < sizeof cbs / sizeof cbs[0]; i++) {
        // The synchronisation regions: `sometimes` where a runtime tells only some kinds.
        int sync = cbs[i].which == ompt_callback_sync_region || cbs[i].which == ompt_callback_sync_region_wait;
        int r = set_callback(cbs[i].which, cbs[i].f);
        if (r != ompt_set_always && !(sync && r == ompt_set_sometimes)) {
            fprintf(stderr, "ompt_parallel: set_callback(%d) returned %d\n", cbs[i].which, r);
            _exit(2);
        }
    }
    if (set_callback((ompt_callbacks_t)99, (ompt_callback_t)on_thread_end) != ompt_set_error) {
        fprintf(stderr, "ompt_parallel: an unknown callback was not refused\n");
        _exit(2);
    }
    initialized = 1;
    return 1;
}

/// At exit: the initial thread's implicit task ended, then the thread, before this.
static void tool_finalize(ompt_data_t *tool_data) {
    if (tool_data->value != 42) {
        fprintf(stderr, "ompt_parallel: finalize got the wrong tool data\n");
        _exit(3);
    }
    int last_impl = -1, last_end = -1;
    for (int i = 0; i < nev; i++) {
        if (evs[i].thread != 1)
            continue;
        if (evs[i].kind == IMPL_END && evs[i].c == ompt_task_initial)
            last_impl = i;
        if (evs[i].kind == THREAD_END)
            last_end = i;
    }
    if (last_impl < 0 || last_end < last_impl || evs[last_impl].a != 1) {
        fprintf(stderr, "ompt_parallel: at exit, the initial task's end (%d) and the thread's (%d) are missing or out of order\n",
                last_impl, last_end);
        _exit(3);
    }
    puts("ompt_parallel: finalized");
    fflush(stdout);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version, const char *runtime_version) {
    (void)omp_version, (void)runtime_version;
    static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
    return &result;
}

/// The kinds thread `t` recorded in events [from, to), in order.
static int kinds_of(uint64_t t, int from, int to, int *out, int max) {
    int n = 0;
    for (int i = from; i < to && n < max; i++)
        if (evs[i].thread == t)
            out[n++] = evs[i].kind;
    return n;
}

static void expect_kinds(const char *what, uint64_t t, int from, int to, const int *want, int nwant) {
    int got[64];
    int n = kinds_of(t, from, to, got, 64);
    int ok = n == nwant;
    for (int i = 0; ok && i < n; i++)
        ok = got[i] == want[i];
    if (!ok) {
        fprintf(stderr, "ompt_parallel: %s: thread %lu recorded:", what, (unsigned long)t);
        for (int i = 0; i < n; i++)
            fprintf(stderr, " %s", names[got[i]]);
        fprintf(stderr, "\n  expected:");
        for (int i = 0; i < nwant; i++)
            fprintf(stderr, " %s", names[want[i]]);
        fprintf(stderr, "\n");
        failures++;
    }
}

static int find(int kind, int from) {
    for (int i = from; i < nev; i++)
        if (evs[i].kind == kind)
            return i;
    return -1;
}

/// The first event of `kind` thread `t` recorded at `from` or after.
static int find_of(uint64_t t, int kind, int from) {
    for (int i = from; i < nev; i++)
        if (evs[i].kind == kind && evs[i].thread == t)
            return i;
    return -1;
}

/// A thread of the program's: a region of one thread (with a side effect: clang deletes a
/// region that has none).
static int own_thread_ran;
static void *own_thread(void *arg) {
    (void)arg;
#pragma omp parallel num_threads(1)
    {
        __atomic_fetch_add(&own_thread_ran, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

int main(void) {
    omp_set_max_active_levels(1);
    ompt_data_t *seen[2] = {NULL, NULL};
    int sizes[2] = {0, 0}, outer[2] = {0, 0}, outer_size[2] = {0, 0};
    int start = 0;
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
        outer[me] = get_parallel_info(1, NULL, &outer_size[me]);
        get_parallel_info(0, &seen[me], &sizes[me]);
        CHECK(get_thread_data() != NULL && get_thread_data()->value != 0, "thread data");
    }
    CHECK(initialized, "the tool was not initialized");
    // The initial thread began, with its implicit task (initial, index 1, in a region).
    CHECK(nev >= 2 && evs[0].kind == THREAD_BEGIN && evs[0].a == ompt_thread_initial && evs[0].thread == 1,
          "first event %s", nev ? names[evs[0].kind] : "none");
    CHECK(nev >= 2 && evs[1].kind == IMPL_BEGIN && evs[1].a == 1 && evs[1].b == 1 && evs[1].c == ompt_task_initial &&
              evs[1].p != NULL,
          "the initial task's begin");
    int pb = find(PAR_BEGIN, start), pe = find(PAR_END, start);
    CHECK(pb >= 0 && pe > pb, "parallel begin %d end %d", pb, pe);
    if (pb < 0 || pe < 0)
        return 1;
    ev_t *b = &evs[pb];
    CHECK(b->thread == 1 && b->a == 2, "requested %lu", (unsigned long)b->a);
    CHECK((b->b & ompt_parallel_invoker_runtime) && (b->b & ompt_parallel_team), "flags %#lx", (unsigned long)b->b);
    CHECK(evs[pe].pv == b->c, "parallel end's data");
    int team = sizes[0];
    CHECK(team >= 1 && team <= 2, "team size %d", team);
    for (int i = 0; i < team; i++) {
        CHECK(seen[i] && seen[i]->value == b->c, "thread %d: get_parallel_info(0) gave another region's data", i);
        CHECK(sizes[i] == team, "thread %d: team size %d", i, sizes[i]);
        CHECK(outer[i] == 2 && outer_size[i] == 1, "thread %d: the enclosing (initial) region: %d, size %d", i, outer[i],
              outer_size[i]);
    }
    // The primary: the region, its implicit task, the closing barrier, the task's end, the end.
    int primary[] = {PAR_BEGIN, IMPL_BEGIN, SYNC_BEGIN, WAIT_BEGIN, WAIT_END, SYNC_END, IMPL_END, PAR_END};
    expect_kinds("first region", 1, pb, pe + 1, primary, 8);
    uint64_t worker = 0;
    for (int i = pb; i < pe; i++) {
        if (evs[i].kind == IMPL_BEGIN && evs[i].thread != 1) {
            CHECK(evs[i].pv == b->c && evs[i].a == 1 && evs[i].b == (uint64_t)team, "a worker's implicit task");
            worker = evs[i].thread;
        }
        if (evs[i].kind == SYNC_BEGIN)
            CHECK(evs[i].a == ompt_sync_region_barrier_implicit_parallel && evs[i].pv == b->c, "barrier kind %lu",
                  (unsigned long)evs[i].a);
    }
    CHECK((team == 2) == (worker != 0), "team of %d, worker %lu", team, (unsigned long)worker);

    // A second region: the worker's first implicit task and barrier end before its second
    // task begins (the worker learns at the fork that the barrier is over).
    int second = nev;
#pragma omp parallel num_threads(2)
    {
    }
    if (worker) {
        int first_arrive = -1;
        for (int i = pb; i < second; i++)
            if (evs[i].thread == worker && evs[i].kind == WAIT_BEGIN)
                first_arrive = i;
        int again = -1;
        for (int i = second; i < nev; i++)
            if (evs[i].thread == worker && evs[i].kind == IMPL_BEGIN) {
                again = i;
                break;
            }
        if (again >= 0) {
            int want[] = {WAIT_BEGIN, WAIT_END, SYNC_END, IMPL_END, IMPL_BEGIN};
            expect_kinds("a worker between two regions", worker, first_arrive, again + 1, want, 5);
        }
    }

    // A region of one thread (nested, with max-active-levels 1): begin, its implicit task (index
    // 0 of 1), end, on the encountering thread.
    int nested_from = -1, nested_to = -1;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            pthread_mutex_lock(&mu);
            nested_from = nev;
            pthread_mutex_unlock(&mu);
#pragma omp parallel num_threads(2)
            {
                ompt_data_t *d;
                int size;
                CHECK(get_parallel_info(0, &d, &size) == 2 && size == 1, "nested team size %d", size);
            }
            pthread_mutex_lock(&mu);
            nested_to = nev;
            pthread_mutex_unlock(&mu);
        }
    }
    int i = find(PAR_BEGIN, nested_from);
    CHECK(i >= 0 && i < nested_to && evs[i].a == 2 && (evs[i].b & ompt_parallel_team), "the nested region's begin");
    if (i >= 0) {
        int want[] = {PAR_BEGIN, IMPL_BEGIN, IMPL_END, PAR_END};
        expect_kinds("a region of one thread", evs[i].thread, nested_from, nested_to, want, 4);
        int ib = find_of(evs[i].thread, IMPL_BEGIN, i);
        CHECK(ib >= 0 && evs[ib].a == 0 && evs[ib].b == 1, "its implicit task: index %lu of %lu",
              ib >= 0 ? (unsigned long)evs[ib].a : 0UL, ib >= 0 ? (unsigned long)evs[ib].b : 0UL);
    }
    // A thread of the program's own that uses OpenMP: an initial thread, told begun with its
    // implicit task, and ended (its implicit task first) when it exits.
    int before_thread = nev;
    pthread_t pt;
    pthread_create(&pt, NULL, own_thread, NULL);
    pthread_join(pt, NULL);
    uint64_t own = 0;
    for (int k = before_thread; k < nev; k++)
        if (evs[k].kind == THREAD_BEGIN && evs[k].a == ompt_thread_initial)
            own = evs[k].thread;
    CHECK(own_thread_ran == 1, "the program's thread ran its region %d times", own_thread_ran);
    CHECK(own != 0 && own != 1, "the program's thread was not told as an initial thread");
    if (own) {
        int first = find_of(own, THREAD_BEGIN, before_thread);
        int want[] = {THREAD_BEGIN, IMPL_BEGIN, PAR_BEGIN, IMPL_BEGIN, IMPL_END, PAR_END, IMPL_END, THREAD_END};
        expect_kinds("the program's own thread", own, first, nev, want, 8);
        int last = find_of(own, IMPL_END, find_of(own, PAR_END, first));
        CHECK(last >= 0 && evs[last].c == ompt_task_initial && evs[last].a == 1, "its initial task's end");
    }
    if (failures)
        return 1;
    return 0;
}
