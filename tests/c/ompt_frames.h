/* What the frame tests (`ompt_frames*.c`) share: what `ompt_get_task_info` says of a task,
 * its frames first. Include after `ompt_record.h`; the tool looks up `get_task_info`. */
#ifndef OMPT_FRAMES_H
#define OMPT_FRAMES_H
static ompt_get_task_info_t get_task_info;

/// What `ompt_get_task_info` says of one task.
typedef struct {
    char *exit, *enter;
    int exit_flags, enter_flags;
    uint64_t data;
    int type, thread_num;
} info_t;

static int info(int level, info_t *out) {
    int type = 0, num = -1;
    ompt_data_t *task = NULL, *par = NULL;
    ompt_frame_t *f = NULL;
    if (get_task_info(level, &type, &task, &f, &par, &num) != 2 || !f || !task)
        return 0;
    *out = (info_t){f->exit_frame.ptr, f->enter_frame.ptr, f->exit_frame_flags, f->enter_frame_flags,
                    task->value, type, num};
    return 1;
}

/// An `implicit_task` callback: gives each implicit task a fresh number as its data.
static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *par, ompt_data_t *task, unsigned size,
                             unsigned index, int flags) {
    (void)par, (void)size, (void)index, (void)flags;
    if (endpoint == ompt_scope_begin)
        task->value = fresh();
}

/// Looks up the entry points the frame tests use; returns `ompt_set_callback`.
static ompt_set_callback_t frames_lookup(ompt_function_lookup_t lookup) {
    get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
    get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
    return (ompt_set_callback_t)lookup("ompt_set_callback");
}

/// A runtime frame given as a frame pointer or another address of the frame.
__attribute__((unused)) static int runtime_kind(int flags) { return (flags & ompt_frame_application) == 0 && (flags & 0x30) != 0; }
#endif
