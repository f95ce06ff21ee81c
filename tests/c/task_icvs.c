// task_icvs.c - explicit tasks carry the data-environment ICVs of the task that generated
// them (OpenMP 5.2 §2.1): a task sees its creator's nthreads-var whichever thread runs it,
// and ICV changes made inside a task (deferred, undeferred or run at once) do not leak into
// the generating task or into tasks run later on the same thread.
// oxiomp-test: threads=1,2,4,16
#include <omp.h>

#include "check.h"

#define N 64

int main(void) {
  for (int rep = 0; rep < 20; rep++) {
    int seen[N];
    int after[N];
#pragma omp parallel
    {
      int me = omp_get_thread_num();
      omp_set_num_threads(3 + me);
#pragma omp for schedule(static, 1)
      for (int i = 0; i < N; i++) {
#pragma omp task firstprivate(i) shared(seen)
        {
          seen[i] = omp_get_max_threads();
          omp_set_num_threads(100 + i); /* must stay inside this task */
        }
      }
#pragma omp taskwait
      after[me % N] = omp_get_max_threads();
      /* an undeferred task's change does not leak either */
#pragma omp task if (0)
      omp_set_num_threads(200);
      CHECK_EQ("max threads after an if(0) task that set it", omp_get_max_threads(), 3 + me);
#pragma omp barrier
#pragma omp for schedule(static, 1)
      for (int i = 0; i < N; i++)
        CHECK_EQ("a task sees its creator's nthreads-var", seen[i], 3 + (i % omp_get_num_threads()));
      CHECK_EQ("the creator's nthreads-var after its tasks ran", after[me % N], 3 + me);
    }
  }
  return failures != 0;
}
