/* What the OMPT test tools in the programs share: a list of recorded callbacks, each with the
 * recording thread's number (its thread data, which the tool's thread_begin sets) and three
 * values whose meaning the program gives per kind, and the CHECK reporting. Define TOOL_NAME
 * (the program's name, for messages) and MAX_EV before including it. */
#ifndef OMPT_RECORD_H
#define OMPT_RECORD_H
#include <omp-tools.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    int kind;
    uint64_t thread;  // the recording thread's number (its thread data)
    uint64_t a, b, c; // per kind: see the program's callbacks
} ev_t;

static ev_t evs[MAX_EV];
static int nev;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t next_id = 1;
static int failures;
static ompt_get_thread_data_t get_thread_data;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, TOOL_NAME ": line %d: check failed: %s: ", __LINE__, #cond);      \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

/// A number no other call returns.
static uint64_t fresh(void) { return __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED); }

/// The value of a tool's data word (0 for none).
static uint64_t val(ompt_data_t *d) { return d ? d->value : 0; }

/// A `thread_begin` callback: gives the thread a fresh number as its data.
__attribute__((unused)) static void number_thread(ompt_thread_t type, ompt_data_t *thread_data) {
    (void)type;
    thread_data->value = fresh();
}

/// Records an event of `kind` on the calling thread.
static void rec(int kind, uint64_t a, uint64_t b, uint64_t c) {
    uint64_t t = val(get_thread_data());
    pthread_mutex_lock(&mu);
    if (nev < MAX_EV)
        evs[nev++] = (ev_t){kind, t, a, b, c};
    pthread_mutex_unlock(&mu);
}

/// A callback to register; `sometimes`: `ompt_set_sometimes` is an acceptable answer.
typedef struct {
    ompt_callbacks_t which;
    ompt_callback_t f;
    int sometimes;
} callback_t;

/// Registers `n` callbacks; 0 (the tool declines) if one is refused.
static int register_all(ompt_set_callback_t set_callback, const callback_t *cbs, unsigned n) {
    for (unsigned i = 0; i < n; i++) {
        int r = set_callback(cbs[i].which, cbs[i].f);
        if (!(r == ompt_set_always || (cbs[i].sometimes && r >= ompt_set_sometimes))) {
            fprintf(stderr, TOOL_NAME ": set_callback(%d) returned %d\n", cbs[i].which, r);
            return 0;
        }
    }
    return 1;
}

static int tool_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data);

static void tool_finalize(ompt_data_t *tool_data) { (void)tool_data; }

/// The program's tool: `tool_initialize`, which the program defines.
ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version, const char *runtime_version) {
    (void)omp_version, (void)runtime_version;
    static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
    return &result;
}
#endif
