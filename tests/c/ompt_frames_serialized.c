// The task frames (`ompt_frame_t`) of a serialized region (`parallel if(0)`), whose code the
// program calls itself between `__kmpc_serialized_parallel` and `__kmpc_end_serialized_parallel`:
// its implicit task starts at the frame of the function that calls it (as
// `__builtin_frame_address` sees it: built as `ompt_frames.c` is), where the encountering task
// entered the runtime, and that task's enter frame is gone once the region ended. Debian's
// libomp 19 gives a frame below the region's own code's as the exit frame and leaves the enter
// frame set after the region: no reference run.
// oxiomp-test: threads=none
// oxiomp-test: reference=skip
// oxiomp-test: cflags=-O0 -g0 -fno-omit-frame-pointer
// oxiomp-test: gcc=skip: an OMPT tool (omp-tools.h), libomp's tool interface
#include <omp-tools.h>
#include <omp.h>
#include <stdio.h>

#define TOOL_NAME "ompt_frames_serialized"
#define MAX_EV 16
#include "ompt_record.h"
#include "ompt_frames.h"


static int tool_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data) {
    (void)device, (void)tool_data;
    ompt_set_callback_t set = frames_lookup(lookup);
    const callback_t cbs[] = {
        {ompt_callback_thread_begin, (ompt_callback_t)number_thread, 0},
        {ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task, 0},
    };
    return register_all(set, cbs, sizeof cbs / sizeof cbs[0]);
}

static char *main_fp;

int main(void) {
    main_fp = __builtin_frame_address(0);
    info_t init;
    CHECK(info(0, &init) && (init.type & ompt_task_initial) && !init.enter, "no initial task in the program's code");
#pragma omp parallel if (0)
    {
        info_t s, p;
        CHECK(info(0, &s) && s.exit == (char *)__builtin_frame_address(1) && s.exit == main_fp,
              "exit frame %p, not main's %p", s.exit, main_fp);
        CHECK(s.exit_flags == (ompt_frame_application | ompt_frame_framepointer), "exit frame flags %#x",
              s.exit_flags);
        CHECK(info(1, &p) && (p.type & ompt_task_initial) && p.enter == main_fp,
              "the initial task's enter frame %p, not main's %p", p.enter, main_fp);
    }
    CHECK(info(0, &init) && !init.enter, "the initial task's enter frame %p after the region", init.enter);
    if (failures)
        return 1;
    printf("ompt_frames_serialized: ok\n");
    return 0;
}
