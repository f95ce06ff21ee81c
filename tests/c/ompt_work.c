// The OMPT callbacks of worksharing and the other constructs, as a tool in the program sees
// them: work (static, dynamic and guided loops, sections, single's executor and others, taskloop,
// scope),
// dispatch (loops' and taskloops' chunks), masked, flush, cancel, task_dependence, a doacross
// loop's dependences, error and omp_control_tool. Each construct runs in a team of one (deterministic sequences) or, for
// the counts, of two.
// oxiomp-test: threads=none
// oxiomp-test: env=OMP_CANCELLATION=true
// oxiomp-test: gcc=skip: an OMPT tool (omp-tools.h), libomp's tool interface
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp-tools.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>

enum { WORK_B = 1, WORK_E, DISPATCH, MASKED_B, MASKED_E, FLUSH, CANCEL, DEPENDENCE, ERROR, CONTROL, CREATE, DEPS };

// libomp's `scope` entries (clang 19 does not compile the construct: called as a compiler
// would).
extern void __kmpc_scope(void *loc, int gtid, void *reserved);
extern void __kmpc_end_scope(void *loc, int gtid, void *reserved);
extern int __kmpc_global_thread_num(void *loc);

#define TOOL_NAME "ompt_work"
#define MAX_EV 8192
#include "ompt_record.h"

static void on_task_create(ompt_data_t *parent, const ompt_frame_t *frame, ompt_data_t *task, int flags, int has_deps,
                           const void *ra) {
    (void)parent, (void)frame, (void)flags, (void)has_deps, (void)ra;
    task->value = fresh();
    rec(CREATE, task->value, 0, 0);
}
static void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t *par, ompt_data_t *task,
                    uint64_t count, const void *ra) {
    (void)ra, (void)task;
    rec(endpoint == ompt_scope_begin ? WORK_B : WORK_E, type, count, par != NULL);
}
static void on_dispatch(ompt_data_t *par, ompt_data_t *task, ompt_dispatch_t kind, ompt_data_t instance) {
    (void)par, (void)task;
    ompt_dispatch_chunk_t *c = instance.ptr;
    rec(DISPATCH, kind, c ? c->start : 0, c ? c->iterations : 0);
}
static void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t *par, ompt_data_t *task, const void *ra) {
    (void)par, (void)task, (void)ra;
    rec(endpoint == ompt_scope_begin ? MASKED_B : MASKED_E, 0, 0, 0);
}
static void on_flush(ompt_data_t *thread, const void *ra) { rec(FLUSH, val(thread), (uint64_t)(uintptr_t)ra, 0); }
static void on_cancel(ompt_data_t *task, int flags, const void *ra) {
    (void)ra;
    rec(CANCEL, (unsigned)flags, val(task), 0);
}
static void on_task_dependence(ompt_data_t *src, ompt_data_t *sink) { rec(DEPENDENCE, val(src), val(sink), 0); }
/// A doacross loop's dependences: their kind (the first's), count and iteration (two
/// dimensions: 1000 * i + j).
static void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int ndeps) {
    (void)task;
    uint64_t it = 0;
    for (int i = 0; i < ndeps; i++)
        it = it * 1000 + deps[i].variable.value;
    rec(DEPS, ndeps > 0 ? (uint64_t)deps[0].dependence_type : 0, (uint64_t)ndeps, it);
}
static char error_text[64];
static void on_error(ompt_severity_t severity, const char *message, size_t length, const void *ra) {
    (void)ra;
    pthread_mutex_lock(&mu);
    snprintf(error_text, sizeof error_text, "%.*s", (int)length, message);
    pthread_mutex_unlock(&mu);
    rec(ERROR, severity, length, 0);
}
static int on_control_tool(uint64_t command, uint64_t modifier, void *arg, const void *ra) {
    (void)ra;
    rec(CONTROL, command, modifier, (uint64_t)(uintptr_t)arg);
    return 40 + (int)command;
}

static int tool_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data) {
    (void)device, (void)tool_data;
    ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
    callback_t cbs[] = {
        {ompt_callback_thread_begin, (ompt_callback_t)number_thread, 0},
        {ompt_callback_task_create, (ompt_callback_t)on_task_create, 0},
        {ompt_callback_work, (ompt_callback_t)on_work, 1},
        {ompt_callback_dispatch, (ompt_callback_t)on_dispatch, 1},
        {ompt_callback_masked, (ompt_callback_t)on_masked, 0},
        {ompt_callback_flush, (ompt_callback_t)on_flush, 0},
        {ompt_callback_cancel, (ompt_callback_t)on_cancel, 0},
        {ompt_callback_task_dependence, (ompt_callback_t)on_task_dependence, 1},
        {ompt_callback_dependences, (ompt_callback_t)on_dependences, 1},
        {ompt_callback_error, (ompt_callback_t)on_error, 0},
        {ompt_callback_control_tool, (ompt_callback_t)on_control_tool, 0},
    };
    return register_all(set_callback, cbs, sizeof cbs / sizeof cbs[0]);
}

/// How many events of `kind` (and, if `a` >= 0, with that first value) the calling thread
/// recorded from `from` on.
static int count(int from, int kind, long a) {
    uint64_t t = val(get_thread_data());
    int n = 0;
    for (int i = from; i < nev; i++)
        n += evs[i].thread == t && evs[i].kind == kind && (a < 0 || evs[i].a == (uint64_t)a);
    return n;
}

/// The index of the first event of `kind` the calling thread recorded from `from` on.
static int first(int from, int kind) {
    uint64_t t = val(get_thread_data());
    for (int i = from; i < nev; i++)
        if (evs[i].thread == t && evs[i].kind == kind)
            return i;
    return -1;
}

int main(void) {
    int x = 0, sum = 0;
    int m = nev;
#pragma omp parallel num_threads(1) reduction(+ : sum)
    {
        int from = nev;
#pragma omp for schedule(static)
        for (int i = 0; i < 10; i++)
            sum += i;
        CHECK(count(from, WORK_B, ompt_work_loop_static) == 1 && count(from, WORK_E, ompt_work_loop_static) == 1,
              "a static loop's work");


        from = nev;
#pragma omp for schedule(dynamic, 3)
        for (int i = 0; i < 10; i++)
            sum += i;
        CHECK(count(from, WORK_B, ompt_work_loop_dynamic) == 1 && count(from, WORK_E, ompt_work_loop_dynamic) == 1,
              "a dynamic loop's work");
        // Its chunks, in order, cover the 10 iterations (a team of one may take them at once).
        int chunks = 0, iters = 0, contiguous = 1;
        uint64_t t = val(get_thread_data());
        for (int i = from; i < nev; i++)
            if (evs[i].thread == t && evs[i].kind == DISPATCH && evs[i].a == ompt_dispatch_ws_loop_chunk) {
                contiguous &= (int)evs[i].b == iters;
                chunks++;
                iters += (int)evs[i].c;
            }
        CHECK(chunks >= 1 && iters == 10 && contiguous, "a dynamic loop's chunks: %d, %d iterations", chunks, iters);

        from = nev;
#pragma omp sections
        {
#pragma omp section
            sum += 1;
#pragma omp section
            sum += 2;
        }
        CHECK(count(from, WORK_B, ompt_work_sections) == 1 && count(from, WORK_E, ompt_work_sections) == 1,
              "sections' work");

        from = nev;
#pragma omp single
        sum += 1;
        CHECK(count(from, WORK_B, ompt_work_single_executor) == 1 && count(from, WORK_E, ompt_work_single_executor) == 1,
              "a single's executor");

        from = nev;
        int gtid = __kmpc_global_thread_num(NULL);
        __kmpc_scope(NULL, gtid, NULL);
        __kmpc_end_scope(NULL, gtid, NULL);
        CHECK(count(from, WORK_B, ompt_work_scope) == 1 && count(from, WORK_E, ompt_work_scope) == 1 &&
                  evs[first(from, WORK_B)].b == 1,
              "a scope's work");

        from = nev;
#pragma omp masked
        sum += 1;
        int mb = first(from, MASKED_B), me = first(from, MASKED_E);
        CHECK(mb >= 0 && me > mb, "masked: begin %d end %d", mb, me);

        from = nev;
#pragma omp flush
        CHECK(count(from, FLUSH, -1) == 1 && evs[first(from, FLUSH)].a == val(get_thread_data()), "flush");
        // Its code address is in the program (where it called the runtime), not in the runtime.
        if (count(from, FLUSH, -1) == 1) {
            Dl_info in_prog, at;
            const void *ra = (const void *)(uintptr_t)evs[first(from, FLUSH)].b;
            CHECK(ra != NULL && dladdr((void *)main, &in_prog) && dladdr(ra, &at) && at.dli_fbase == in_prog.dli_fbase,
                  "flush's codeptr_ra %p is not in the program", ra);
        }

        from = nev;
#pragma omp taskloop grainsize(5)
        for (int i = 0; i < 10; i++)
            __atomic_fetch_add(&x, 1, __ATOMIC_RELAXED);
        CHECK(count(from, WORK_B, ompt_work_taskloop) == 1 && count(from, WORK_E, ompt_work_taskloop) == 1,
              "a taskloop's work");
        int wb = first(from, WORK_B);
        CHECK(wb >= 0 && evs[wb].b == 10, "a taskloop's count %lu", wb >= 0 ? (unsigned long)evs[wb].b : 0UL);
        // Two chunks, each a task created in the construct and told as a chunk when it starts
        // (libomp tells no chunk in a team of one; the team of two below checks them).
        int we = first(wb + 1, WORK_E), created = 0, chunk_at[2] = {0, 0}, others = 0;
        for (int i = wb; i < we; i++) {
            created += evs[i].kind == CREATE;
            if (evs[i].kind == DISPATCH && evs[i].a == ompt_dispatch_taskloop_chunk && evs[i].c == 5 && evs[i].b <= 5 &&
                evs[i].b % 5 == 0)
                chunk_at[evs[i].b / 5]++;
            else if (evs[i].kind == DISPATCH)
                others++;
        }
        CHECK(created == 2 && chunk_at[0] == chunk_at[1] && chunk_at[0] <= 1 && others == 0,
              "a taskloop's chunks: %d created, told at 0: %d, at 5: %d, %d other dispatches", created, chunk_at[0],
              chunk_at[1], others);
    }
    CHECK(sum == 45 + 45 + 3 + 1 + 1 && x == 10, "sum %d x %d", sum, x);

    // single's others, in a team of two: the thread that does not run the block; a guided
    // loop (a team of one may run it as a static one).
    int others = 0, guided = 0, static_chunks = 0;
#pragma omp parallel num_threads(2)
    {
        int from = nev;
#pragma omp single
        x++;
        if (omp_get_num_threads() == 2 && count(from, WORK_B, ompt_work_single_other) == 1 &&
            count(from, WORK_E, ompt_work_single_other) == 1)
            __atomic_fetch_add(&others, 1, __ATOMIC_RELAXED);
        from = nev;
#pragma omp for schedule(guided)
        for (int i = 0; i < 10; i++)
            __atomic_fetch_add(&x, 1, __ATOMIC_RELAXED);
        if (count(from, WORK_B, ompt_work_loop_guided) == 1 && count(from, WORK_E, ompt_work_loop_guided) == 1)
            __atomic_fetch_add(&guided, 1, __ATOMIC_RELAXED);
        // A static loop of 10 iterations: each of the two threads' chunk is told, 5 iterations.
        from = nev;
#pragma omp for schedule(static)
        for (int i = 0; i < 10; i++)
            __atomic_fetch_add(&x, 1, __ATOMIC_RELAXED);
        int sc = first(from, DISPATCH);
        if (sc >= 0 && evs[sc].a == ompt_dispatch_ws_loop_chunk && evs[sc].c == 5 &&
            evs[sc].b == (uint64_t)(5 * omp_get_thread_num()))
            __atomic_fetch_add(&static_chunks, 1, __ATOMIC_RELAXED);
    }
    {
        int team = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
        team = omp_get_num_threads();
        CHECK(others == team - 1, "single's others: %d of %d threads", others, team);
        CHECK(guided == team || team == 1, "a guided loop's work: %d of %d threads", guided, team);
        CHECK(static_chunks == team || team == 1, "a static loop's chunks: %d of %d threads", static_chunks, team);
    }

    // A taskloop in a team of two: the encountering thread creates every chunk (4 tasks);
    // each chunk, whichever thread runs it, is told with its iterations.
    {
        int created = 0, created_elsewhere = 0, chunks = 0, iters = 0, ok = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
        {
            uint64_t me = val(get_thread_data());
            int from = nev;
#pragma omp taskloop num_tasks(4)
            for (int i = 0; i < 40; i++)
                __atomic_fetch_add(&x, 1, __ATOMIC_RELAXED);
            pthread_mutex_lock(&mu);
            for (int i = from; i < nev; i++) {
                if (evs[i].kind == CREATE)
                    *(evs[i].thread == me ? &created : &created_elsewhere) += 1;
                if (evs[i].kind == DISPATCH && evs[i].a == ompt_dispatch_taskloop_chunk) {
                    chunks++;
                    iters += (int)evs[i].c;
                }
            }
            pthread_mutex_unlock(&mu);
            ok = 1;
        }
        CHECK(ok && created == 4 && created_elsewhere == 0 && chunks == 4 && iters == 40,
              "a taskloop of 4 tasks: %d created by its thread, %d elsewhere, %d chunks told, %d iterations", created,
              created_elsewhere, chunks, iters);
    }

    // A doacross loop in a team of two: each thread tells, for each of its iterations (i, j),
    // the sinks inside the iteration space it waits for, then the source.
    {
        uint64_t owner[4][2];
        int from = nev, team = 0;
#pragma omp parallel num_threads(2)
        {
#pragma omp single
            team = omp_get_num_threads();
#pragma omp for ordered(2) schedule(static)
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 2; j++) {
                    owner[i][j] = val(get_thread_data());
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
                    __atomic_fetch_add(&x, 1, __ATOMIC_RELAXED);
#pragma omp ordered depend(source)
                }
        }
        // Each thread's expected sequence, from the iterations it ran, in order.
        int bad = 0, told = 0;
        uint64_t threads[2] = {owner[0][0], owner[3][1]};
        for (int k = 0; k < (threads[0] == threads[1] ? 1 : 2) && team == 2; k++) {
            int at = from;
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 2; j++) {
                    if (owner[i][j] != threads[k])
                        continue;
                    struct {
                        int want;
                        uint64_t type, it;
                    } steps[3] = {{i > 0, ompt_dependence_type_sink, 1000 * (i - 1) + j},
                                  {j > 0, ompt_dependence_type_sink, 1000 * i + j - 1},
                                  {1, ompt_dependence_type_source, 1000 * i + j}};
                    for (int s = 0; s < 3; s++) {
                        if (!steps[s].want)
                            continue;
                        while (at < nev && !(evs[at].thread == threads[k] && evs[at].kind == DEPS))
                            at++;
                        bad += at == nev || evs[at].a != steps[s].type || evs[at].b != 2 || evs[at].c != steps[s].it;
                        told += at < nev;
                        at++;
                    }
                }
        }
        // (0, 0) waits for nothing; 7 iterations have sinks inside the space (10 of them).
        CHECK(team != 2 || (bad == 0 && told == 8 + 10), "a doacross loop's dependences: %d of %d wrong", bad, told);
    }

    // Dependences between tasks: the second waits for the first, not complete yet (it waits
    // until the second is created).
    int from = nev, gate = 0, y = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
#pragma omp task depend(out : y) shared(y, gate)
        {
            while (!__atomic_load_n(&gate, __ATOMIC_ACQUIRE)) {
            }
            y = 1;
        }
#pragma omp task depend(in : y) shared(y)
        y++;
        __atomic_store_n(&gate, 1, __ATOMIC_RELEASE);
#pragma omp taskwait
    }
    {
        uint64_t created[2] = {0, 0};
        int nc = 0, dep = -1;
        for (int i = from; i < nev; i++) {
            if (evs[i].kind == CREATE && nc < 2)
                created[nc++] = evs[i].a;
            if (evs[i].kind == DEPENDENCE)
                dep = i;
        }
        CHECK(y == 2 && nc == 2 && dep >= 0 && evs[dep].a == created[0] && evs[dep].b == created[1],
              "task_dependence between the two tasks");
    }

    // Cancellation (OMP_CANCELLATION=true): activated by the canceller, detected at a
    // cancellation point.
    from = nev;
#pragma omp parallel num_threads(1)
    {
#pragma omp cancel parallel
    }
    CHECK(count(from, CANCEL, ompt_cancel_parallel | ompt_cancel_activated) == 1, "cancel parallel");
    // A taskgroup cancelled by its first task: the second is discarded (told), or runs (libomp
    // runs it in a team of one, and its cancellation point does not tell).
    from = nev;
#pragma omp parallel num_threads(1)
#pragma omp taskgroup
    {
#pragma omp task
        {
#pragma omp cancel taskgroup
        }
#pragma omp task
        {
#pragma omp cancellation point taskgroup
        }
    }
    CHECK(count(from, CANCEL, ompt_cancel_taskgroup | ompt_cancel_activated) == 1 &&
              count(from, CANCEL, ompt_cancel_discarded_task) +
                      count(from, CANCEL, ompt_cancel_taskgroup | ompt_cancel_detected) <=
                  1,
          "cancel taskgroup: activated %d, discarded %d, detected %d",
          count(from, CANCEL, ompt_cancel_taskgroup | ompt_cancel_activated),
          count(from, CANCEL, ompt_cancel_discarded_task),
          count(from, CANCEL, ompt_cancel_taskgroup | ompt_cancel_detected));

    // An error directive of warning severity: the tool sees its message first.
    from = nev;
#pragma omp error at(execution) severity(warning) message("ompt_work: a warning")
    CHECK(count(from, ERROR, ompt_warning) == 1 && strcmp(error_text, "ompt_work: a warning") == 0, "error: %s",
          error_text);

    from = nev;
    int r = omp_control_tool(omp_control_tool_flush, 7, &x);
    CHECK(r == 40 + omp_control_tool_flush && count(from, CONTROL, omp_control_tool_flush) == 1 &&
              evs[first(from, CONTROL)].b == 7 && evs[first(from, CONTROL)].c == (uint64_t)(uintptr_t)&x,
          "omp_control_tool returned %d", r);
    (void)m;
    if (failures)
        return 1;
    puts("ompt_work: ok");
    return 0;
}
