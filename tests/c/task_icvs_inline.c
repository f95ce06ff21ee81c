// task_icvs_inline.c - tasks a thread runs at once (final tasks, a team of one, included
// tasks) borrow the thread's ICVs instead of copying them; what such a task changes must
// still die with it, at every nesting depth, around nested parallel regions, and across an
// untied task's scheduling points, while its own children inherit the changed values.
// oxiomp-test: threads=1,2,4,16
#include <omp.h>

#include "icv_check.h"

int main(void) {
  for (int rep = 0; rep < 20; rep++) {
#pragma omp parallel
    {
      int me = omp_get_thread_num();
      omp_set_num_threads(5 + me);
      omp_set_schedule(omp_sched_dynamic, 7 + me);

      /* final: the task and everything inside it runs at once on this thread */
#pragma omp task final(1)
      {
        check_base("a final task starts with its creator's ICVs", 5 + me, 7 + me);
        omp_set_num_threads(50 + me);
        /* an included child sees the changed value, changes its own, which dies with it */
#pragma omp task
        {
          CHECK_EQ("an included child inherits its parent's change", omp_get_max_threads(), 50 + me);
          omp_set_num_threads(500 + me);
          omp_set_schedule(omp_sched_static, 3);
        }
        check_base("after an included child that changed ICVs", 50 + me, 7 + me);
        /* a child that changes nothing, then a change after it */
#pragma omp task
        CHECK_EQ("a second included child", omp_get_max_threads(), 50 + me);
        omp_set_schedule(omp_sched_guided, 11);
        check_base("a final task's own changes stay", 50 + me, 11);
        /* a nested region inside the task: its implicit task's changes are its own */
#pragma omp parallel num_threads(2)
        {
          omp_set_num_threads(77);
#pragma omp task
          omp_set_num_threads(78);
        }
        check_base("after a nested region inside a final task", 50 + me, 11);
      }
      check_base("the creator after a final task that changed ICVs", 5 + me, 7 + me);

      /* an untied task run at once keeps its own changes across a task scheduling point */
#pragma omp task untied final(1)
      {
        omp_set_num_threads(60 + me);
#pragma omp taskyield
        CHECK_EQ("an untied task's change survives taskyield", omp_get_max_threads(), 60 + me);
#pragma omp task
        CHECK_EQ("its child inherits it", omp_get_max_threads(), 60 + me);
#pragma omp taskwait
        CHECK_EQ("and taskwait", omp_get_max_threads(), 60 + me);
      }
      check_base("the creator after an untied final task", 5 + me, 7 + me);

      /* deferred children of a task run at once take the changed values along */
      int seen = 0;
#pragma omp taskgroup
      {
#pragma omp task shared(seen)
        {
          omp_set_num_threads(90 + me);
#pragma omp task shared(seen)
          seen = omp_get_max_threads();
        }
      }
      CHECK_EQ("a grandchild sees its parent's change, wherever it runs", seen, 90 + me);
      check_base("the creator after a task whose child was deferred", 5 + me, 7 + me);

      /* many tasks run at once in a row (past the cut-off), each changing an ICV */
      for (int i = 0; i < 200; i++) {
#pragma omp task firstprivate(i)
        {
          omp_set_dynamic(i & 1);
          omp_set_num_threads(1000 + i);
        }
      }
#pragma omp taskwait
      check_base("the creator after 200 tasks that changed ICVs", 5 + me, 7 + me);
      CHECK_EQ("dyn-var after tasks that changed it", omp_get_dynamic(), 0);
    }
  }
  return failures != 0;
}
