// The task frames (`ompt_frame_t`) a tool is shown where the program's code and the runtime's
// meet, checked against the frames the program sees itself (`__builtin_frame_address`: so the
// program is built at -O0 with frame pointers, and without debug information, whose wrapper
// functions would add a frame of their own): an implicit task's exit frame is the frame of the
// runtime's code that called the region's code; a task in a runtime entry (a fork, a barrier,
// a task's creation, a taskwait) has an enter frame between its own code's frame and the
// runtime's deeper frames, and none again once the entry returned; an if(0) task, whose code
// the program calls itself, starts at the calling function's frame, where its encountering task
// entered; the ancestors `ompt_get_task_info` walks are the tasks the thread suspended (an
// explicit task's, whatever task ran it: an implicit task in a runtime entry). Serialized
// regions: `ompt_frames_serialized.c`.
// oxiomp-test: threads=none
// oxiomp-test: cflags=-O0 -g0 -fno-omit-frame-pointer
// oxiomp-test: gcc=skip: an OMPT tool (omp-tools.h), libomp's tool interface
#include <omp-tools.h>
#include <omp.h>
#include <stdio.h>

#define TOOL_NAME "ompt_frames"
#define MAX_EV 16
#include "ompt_record.h"

#include "ompt_frames.h"

// What the callbacks saw, per thread number (two threads at most).
static info_t at_barrier[2], at_region_end[2];
static char *begin_exit, *begin_enter, *create_exit, *create_enter;

static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par, unsigned requested,
                              int flags, const void *ra) {
    (void)task, (void)par, (void)requested, (void)flags, (void)ra;
    if (!begin_enter) {
        begin_exit = frame->exit_frame.ptr;
        begin_enter = frame->enter_frame.ptr;
    }
}
static void on_task_create(ompt_data_t *parent, const ompt_frame_t *frame, ompt_data_t *task, int flags,
                           int has_deps, const void *ra) {
    (void)parent, (void)has_deps, (void)ra;
    task->value = fresh();
    if ((flags & ompt_task_explicit) && !(flags & ompt_task_undeferred) && !create_enter) {
        create_exit = frame->exit_frame.ptr;
        create_enter = frame->enter_frame.ptr;
    }
}
static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t *par,
                           ompt_data_t *task, const void *ra) {
    (void)par, (void)task, (void)ra;
    info_t i;
    if (endpoint != ompt_scope_begin || !info(0, &i) || i.thread_num < 0 || i.thread_num > 1)
        return;
    if (kind == ompt_sync_region_barrier_explicit && !at_barrier[i.thread_num].data)
        at_barrier[i.thread_num] = i;
    if (kind == ompt_sync_region_barrier_implicit_parallel)
        at_region_end[i.thread_num] = i;
}

static int tool_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data) {
    (void)device, (void)tool_data;
    ompt_set_callback_t set = frames_lookup(lookup);
    const callback_t cbs[] = {
        {ompt_callback_thread_begin, (ompt_callback_t)number_thread, 0},
        {ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task, 0},
        {ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin, 0},
        {ompt_callback_task_create, (ompt_callback_t)on_task_create, 0},
        {ompt_callback_sync_region, (ompt_callback_t)on_sync_region, 1},
    };
    return register_all(set, cbs, sizeof cbs / sizeof cbs[0]);
}

static char *main_fp;

int main(void) {
    main_fp = __builtin_frame_address(0);
    info_t init;
    CHECK(info(0, &init) && (init.type & ompt_task_initial), "no initial task");
    CHECK(!init.exit && !init.enter, "the initial task, in the program's code, has frames %p, %p", init.exit,
          init.enter);
    omp_set_max_active_levels(2);
    int threads = 0;

#pragma omp parallel num_threads(2)
    {
        char *exit = __builtin_frame_address(1), *here = __builtin_frame_address(0);
        int me = omp_get_thread_num();
        info_t t, up;
        if (me == 0)
            threads = omp_get_num_threads();
        CHECK(info(0, &t) && (t.type & ompt_task_implicit), "thread %d: no implicit task", me);
        CHECK(t.exit == exit, "thread %d: the implicit task's exit frame %p is not its caller's %p", me, t.exit, exit);
        CHECK(runtime_kind(t.exit_flags), "thread %d: exit frame flags %#x", me, t.exit_flags);
        CHECK(!t.enter, "thread %d: the implicit task, in its code, has an enter frame %p", me, t.enter);
        CHECK(info(1, &up) && (up.type & ompt_task_initial), "thread %d: level 1 is no initial task", me);
        CHECK(!up.exit && up.enter == begin_enter, "thread %d: the initial task's frames %p, %p (%p at the fork)", me,
              up.exit, up.enter, begin_enter);
        if (me == 0)
            CHECK(exit < up.enter && up.enter < main_fp, "the fork's enter frame %p is not between main's %p and %p",
                  up.enter, main_fp, exit);

#pragma omp barrier
        info_t b = at_barrier[me], after;
        CHECK(b.exit == exit && b.enter && b.enter < here && runtime_kind(b.enter_flags),
              "thread %d: frames in the barrier %p, %p (flags %#x): not %p and below %p", me, b.exit, b.enter,
              b.enter_flags, exit, here);
        CHECK(info(0, &after) && !after.enter, "thread %d: enter frame %p after the barrier", me, after.enter);

#pragma omp task if (0)
        {
            info_t e, p;
            CHECK(info(0, &e) && e.exit == (char *)__builtin_frame_address(1) && e.exit == here,
                  "thread %d: the if(0) task's exit frame %p is not the region's code's %p", me, e.exit, here);
            CHECK(e.exit_flags == (ompt_frame_application | ompt_frame_framepointer), "if(0) exit flags %#x",
                  e.exit_flags);
            CHECK(info(1, &p) && p.data == t.data && p.exit == exit && p.enter == here,
                  "thread %d: the if(0) task's parent: task %llu frames %p, %p (task %llu: %p, %p)", me,
                  (unsigned long long)p.data, p.exit, p.enter, (unsigned long long)t.data, exit, here);
        }

#pragma omp single
        {
#pragma omp task
            {
                char *task_exit = __builtin_frame_address(1);
                info_t e, p;
                CHECK(info(0, &e) && (e.type & ompt_task_explicit), "no explicit task");
                CHECK(e.exit == task_exit && !e.enter && runtime_kind(e.exit_flags),
                      "the task's frames %p, %p (flags %#x): exit not its caller's %p", e.exit, e.enter, e.exit_flags,
                      task_exit);
                CHECK(info(1, &p) && (p.type & ompt_task_implicit) && p.exit && p.enter,
                      "the task's scheduling parent (type %#x) is not an implicit task in the runtime: %p, %p",
                      p.type, p.exit, p.enter);
            }
#pragma omp taskwait
            CHECK(create_exit == exit && create_enter && create_enter < here,
                  "the creating task's frames at task creation %p, %p: not %p and below %p", create_exit,
                  create_enter, exit, here);
        }

        if (me == 0) {
            char *outer_exit = exit;
            uint64_t outer = t.data;
#pragma omp parallel num_threads(2)
            {
                info_t n, o, i;
                if (omp_get_thread_num() == 0) {
                    CHECK(info(0, &n) && n.exit == (char *)__builtin_frame_address(1), "nested: exit %p", n.exit);
                    CHECK(info(1, &o) && o.data == outer && o.exit == outer_exit && o.enter && o.enter < outer_exit,
                          "nested: the outer implicit task %llu: %p, %p", (unsigned long long)o.data, o.exit, o.enter);
                    CHECK(info(2, &i) && (i.type & ompt_task_initial), "nested: level 2 is no initial task");
                }
            }
        }
    }
    CHECK(threads == 2, "the region had %d threads", threads);
    for (int i = 0; i < threads; i++)
        CHECK(at_region_end[i].data && !at_region_end[i].exit && !at_region_end[i].enter,
              "thread %d: frames %p, %p in the region's closing barrier", i, at_region_end[i].exit,
              at_region_end[i].enter);
    CHECK(!begin_exit && begin_enter, "the initial task's frames at the fork: %p, %p", begin_exit, begin_enter);
    CHECK(info(0, &init) && !init.enter, "the initial task's enter frame %p after the region", init.enter);

    if (failures)
        return 1;
    printf("ompt_frames: ok\n");
    return 0;
}
