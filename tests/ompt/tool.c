// A tool in a library of its own, found through OMP_TOOL_LIBRARIES: says on stdout when it is
// asked to start, initialized and finalized, and how many threads began meanwhile. With
// TOOL_DECLINE set, it declines to start (its ompt_start_tool returns NULL).
#include <omp-tools.h>
#include <stdio.h>
#include <stdlib.h>

static int threads;

static void on_thread_begin(ompt_thread_t type, ompt_data_t *data) {
    (void)type, (void)data;
    __atomic_fetch_add(&threads, 1, __ATOMIC_RELAXED);
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data) {
    (void)device, (void)tool_data;
    ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set_callback || set_callback(ompt_callback_thread_begin, (ompt_callback_t)on_thread_begin) != ompt_set_always)
        return 0;
    printf("tool: initialize\n");
    fflush(stdout);
    return 1;
}

static void finalize(ompt_data_t *tool_data) {
    (void)tool_data;
    printf("tool: finalize after %d thread(s)\n", __atomic_load_n(&threads, __ATOMIC_RELAXED));
    fflush(stdout);
}

ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version, const char *runtime_version) {
    (void)omp_version, (void)runtime_version;
    printf("tool: start\n");
    fflush(stdout);
    if (getenv("TOOL_DECLINE"))
        return NULL;
    static ompt_start_tool_result_t result = {initialize, finalize, {0}};
    return &result;
}
