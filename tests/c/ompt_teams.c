// A host `teams` construct as a tool sees it (libomp's shape): the league's region; in it each
// team's initial task, which runs the team's code in a region of one thread that the runtime
// forks for the team; a `parallel` inside nests in that region's implicit task. The inquiry
// functions, called in the team's code, walk the same levels out: that implicit task, the
// team's initial task, the program's initial task; that region, the league's.
// oxiomp-test: threads=none
// oxiomp-test: gcc=skip: an OMPT tool (omp-tools.h), libomp's tool interface
#include <omp-tools.h>
#include <omp.h>
#include <stdio.h>

enum { PAR_B = 1, PAR_E, IMPL_B, IMPL_E };

#define TOOL_NAME "ompt_teams"
#define MAX_EV 1024
#include "ompt_record.h"

static ompt_get_task_info_t get_task_info;
static ompt_get_parallel_info_t get_parallel_info;

/// PAR_B: the region's value, the encountering task's, the flags and the requested size.
static void on_parallel_begin(ompt_data_t *task, const ompt_frame_t *frame, ompt_data_t *par, unsigned requested,
                              int flags, const void *ra) {
    (void)frame, (void)ra;
    par->value = fresh();
    rec(PAR_B, par->value, val(task), (uint64_t)(unsigned)flags | (uint64_t)requested << 32);
}
/// PAR_E: the region's value and the task it returns to.
static void on_parallel_end(ompt_data_t *par, ompt_data_t *task, int flags, const void *ra) {
    (void)flags, (void)ra;
    rec(PAR_E, val(par), val(task), 0);
}
/// IMPL_B / IMPL_E: the task's value, its region's (begin only), and flags | index << 32 |
/// size << 48.
static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t *par, ompt_data_t *task, unsigned size,
                             unsigned index, int flags) {
    if (endpoint == ompt_scope_begin)
        task->value = fresh();
    uint64_t c = (uint64_t)(unsigned)flags | (uint64_t)index << 32 | (uint64_t)(size & 0xffff) << 48;
    rec(endpoint == ompt_scope_begin ? IMPL_B : IMPL_E, val(task), endpoint == ompt_scope_begin ? val(par) : 0, c);
}

static int tool_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t *tool_data) {
    (void)device, (void)tool_data;
    ompt_set_callback_t set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
    get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
    get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
    get_parallel_info = (ompt_get_parallel_info_t)lookup("ompt_get_parallel_info");
    callback_t cbs[] = {
        {ompt_callback_thread_begin, (ompt_callback_t)number_thread, 0},
        {ompt_callback_parallel_begin, (ompt_callback_t)on_parallel_begin, 0},
        {ompt_callback_parallel_end, (ompt_callback_t)on_parallel_end, 0},
        {ompt_callback_implicit_task, (ompt_callback_t)on_implicit_task, 0},
    };
    return get_task_info && get_parallel_info && register_all(set_callback, cbs, sizeof cbs / sizeof cbs[0]);
}

/// The first event of `kind` from `from` on whose value `a` (if `a` != 0) and `b` (if `b`
/// != 0) are these, and whose flags have all of `flags`.
static int find(int from, int kind, uint64_t a, uint64_t b, unsigned flags) {
    for (int i = from; i < nev; i++)
        if (evs[i].kind == kind && (!a || evs[i].a == a) && (!b || evs[i].b == b) &&
            ((unsigned)evs[i].c & flags) == flags)
            return i;
    return -1;
}

/// What a team's code saw of itself through the inquiry functions.
typedef struct {
    int ok[5];
    int flags[3];
    uint64_t task[3], par[2];
    int size[2];
} seen_t;

int main(void) {
    // The program's initial task.
    int ok = get_task_info != NULL;
    int init_flags = 0;
    ompt_data_t *init = NULL;
    if (ok)
        get_task_info(0, &init_flags, &init, NULL, NULL, NULL);
    CHECK(init && (init_flags & ompt_task_initial), "the program's initial task");
    uint64_t initial = val(init);

    seen_t seen[2] = {0};
    int inner[2] = {0, 0};
    int from = nev;
#pragma omp teams num_teams(2) thread_limit(2)
    {
        int k = omp_get_team_num();
        seen_t *s = &seen[k < 2 ? k : 0];
        for (int l = 0; l < 3; l++) {
            ompt_data_t *t = NULL;
            s->ok[l] = get_task_info(l, &s->flags[l], &t, NULL, NULL, NULL);
            s->task[l] = val(t);
        }
        for (int l = 0; l < 2; l++) {
            ompt_data_t *p = NULL;
            s->ok[3 + l] = get_parallel_info(l, &p, &s->size[l]);
            s->par[l] = val(p);
        }
#pragma omp parallel num_threads(2)
        __atomic_fetch_add(&inner[k < 2 ? k : 0], 1, __ATOMIC_RELAXED);
    }
    CHECK(inner[0] >= 1 && inner[1] >= 1, "the teams' regions ran: %d, %d", inner[0], inner[1]);

    // The league's region, encountered by the program's initial task.
    int lb = find(from, PAR_B, 0, initial, ompt_parallel_league);
    CHECK(lb >= 0 && evs[lb].c >> 32 == 2, "the league's region");
    if (lb < 0)
        return 1;
    uint64_t league = evs[lb].a;
    CHECK(find(lb, PAR_E, league, initial, 0) >= 0, "the league's region's end");

    for (unsigned k = 0; k < 2; k++) {
        // The team's initial task (index: the team's number, size: the number of teams), in
        // the league's region.
        int ib = -1;
        for (int i = lb; i < nev && ib < 0; i++)
            if (evs[i].kind == IMPL_B && (evs[i].c & ompt_task_initial) && evs[i].b == league &&
                (evs[i].c >> 32 & 0xffff) == k)
                ib = i;
        CHECK(ib >= 0 && evs[ib].c >> 48 == 2, "team %u: its initial task", k);
        if (ib < 0)
            continue;
        uint64_t it = evs[ib].a, thread = evs[ib].thread;
        // The region the runtime forks for the team, on the same thread, and its implicit task.
        int rb = find(ib, PAR_B, 0, it, ompt_parallel_team | ompt_parallel_invoker_runtime);
        CHECK(rb >= 0 && evs[rb].thread == thread, "team %u: the region forked for it", k);
        if (rb < 0)
            continue;
        uint64_t region = evs[rb].a;
        int pb = find(rb, IMPL_B, 0, region, ompt_task_implicit);
        CHECK(pb >= 0 && evs[pb].thread == thread && (evs[pb].c >> 32 & 0xffff) == 0, "team %u: its implicit task", k);
        if (pb < 0)
            continue;
        uint64_t impl = evs[pb].a;
        // The team's `parallel`, encountered by that implicit task.
        int ub = find(pb, PAR_B, 0, impl, ompt_parallel_team);
        CHECK(ub >= 0 && evs[ub].c >> 32 == 2, "team %u: its parallel region", k);
        int ue = ub < 0 ? -1 : find(ub, PAR_E, evs[ub].a, impl, 0);
        // Then the implicit task, the forked region and the initial task end, in that order.
        int pe = find(ue < 0 ? pb : ue, IMPL_E, impl, 0, 0);
        int re = find(pe < 0 ? pb : pe, PAR_E, region, it, 0);
        int ie = find(re < 0 ? pb : re, IMPL_E, it, 0, ompt_task_initial);
        // (libomp tells a league worker's initial task's end later, when the thread next wakes.)
        CHECK(ue >= 0 && pe > ue && re > pe && (ie > re || (ie < 0 && thread != evs[lb].thread)),
              "team %u: the ends: %d %d %d %d", k, ue, pe, re, ie);

        // The inquiries from the team's code.
        seen_t *s = &seen[k];
        CHECK(s->ok[0] == 2 && (s->flags[0] & ompt_task_implicit) && s->task[0] == impl,
              "team %u: task level 0: %d, flags %#x, %lu (the implicit task %lu)", k, s->ok[0], s->flags[0],
              (unsigned long)s->task[0], (unsigned long)impl);
        // (libomp's inquiry flags this task implicit, its callback initial.)
        CHECK(s->ok[1] == 2 && (s->flags[1] & (ompt_task_initial | ompt_task_implicit)) && s->task[1] == it,
              "team %u: task level 1: %d, flags %#x, %lu (the initial task %lu)", k, s->ok[1], s->flags[1],
              (unsigned long)s->task[1], (unsigned long)it);
        CHECK(s->ok[2] == 2 && (s->flags[2] & ompt_task_initial) && s->task[2] == initial,
              "team %u: task level 2: %d, flags %#x, %lu (the program's initial task %lu)", k, s->ok[2], s->flags[2],
              (unsigned long)s->task[2], (unsigned long)initial);
        CHECK(s->ok[3] == 2 && s->par[0] == region && s->size[0] == 1,
              "team %u: parallel level 0: %d, %lu of %d (the forked region %lu)", k, s->ok[3],
              (unsigned long)s->par[0], s->size[0], (unsigned long)region);
        CHECK(s->ok[4] == 2 && s->par[1] == league,
              "team %u: parallel level 1: %d, %lu (the league %lu)", k, s->ok[4], (unsigned long)s->par[1],
              (unsigned long)league);
    }
    return failures != 0;
}
