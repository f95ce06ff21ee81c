// A tool in a library of its own that records, per thread, the `work` callbacks and the
// beginnings of barriers, and prints each thread's sequence at finalize, one line per thread:
// `work: <tokens>`, with S+ / S- a single's executor beginning / ending, s+ / s- another
// thread's part of it, L+<count> / L- a static loop, D+ / D- another loop, X+ / X- other
// work, B a barrier beginning.
#include <omp-tools.h>
#include <stdio.h>
#include <string.h>

#define THREADS 64
#define LEN 512

static char seqs[THREADS][LEN];
static int next_thread;

static char *mine(ompt_data_t *thread) { return thread ? seqs[thread->value % THREADS] : NULL; }

static ompt_get_thread_data_t get_thread_data;

static void add(const char *tok) {
    char *s = mine(get_thread_data());
    if (s && strlen(s) + strlen(tok) + 2 < LEN) {
        if (*s)
            strcat(s, " ");
        strcat(s, tok);
    }
}

static void on_thread_begin(ompt_thread_t type, ompt_data_t *data) {
    (void)type;
    data->value = __atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED);
}

static void on_work(ompt_work_t kind, ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
                    uint64_t count, const void *ra) {
    (void)parallel, (void)task, (void)ra;
    char tok[32];
    const char *sign = ep == ompt_scope_begin ? "+" : "-";
    switch (kind) {
    case ompt_work_single_executor:
        snprintf(tok, sizeof tok, "S%s", sign);
        break;
    case ompt_work_single_other:
        snprintf(tok, sizeof tok, "s%s", sign);
        break;
    case ompt_work_loop_static:
        if (ep == ompt_scope_begin)
            snprintf(tok, sizeof tok, "L+%llu", (unsigned long long)count);
        else
            snprintf(tok, sizeof tok, "L-");
        break;
    case ompt_work_loop:
    case ompt_work_loop_dynamic:
    case ompt_work_loop_guided:
    case ompt_work_loop_other:
        snprintf(tok, sizeof tok, "D%s", sign);
        break;
    default:
        snprintf(tok, sizeof tok, "X%s", sign);
    }
    add(tok);
}

static void on_sync(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t *parallel, ompt_data_t *task,
                    const void *ra) {
    (void)parallel, (void)task, (void)ra;
    if (ep != ompt_scope_begin)
        return;
    switch (kind) {
    case ompt_sync_region_barrier_explicit:
    case ompt_sync_region_barrier_implementation:
    case ompt_sync_region_barrier_implicit_workshare:
    case ompt_sync_region_barrier_implicit_parallel:
        add("B");
        break;
    default:
        break;
    }
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data) {
    (void)device, (void)tool_data;
    ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
    if (!set_callback || !get_thread_data)
        return 0;
    set_callback(ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin);
    set_callback(ompt_callback_work, (ompt_callback_t)on_work);
    set_callback(ompt_callback_sync_region, (ompt_callback_t)on_sync);
    return 1;
}

static void finalize(ompt_data_t *tool_data) {
    (void)tool_data;
    for (int t = 0; t < THREADS; t++)
        if (seqs[t][0])
            printf("work: %s\n", seqs[t]);
    fflush(stdout);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version, const char *runtime_version) {
    (void)omp_version, (void)runtime_version;
    static ompt_start_tool_result_t result = {initialize, finalize, {0}};
    return &result;
}
