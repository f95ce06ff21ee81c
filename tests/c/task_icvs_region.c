// task_icvs_region.c - a task run at once borrows its thread's ICVs; a parallel region inside
// it gives the thread an implicit task with ICVs of its own (here bind-var, from the list
// spread,close,master: close in the outer region, master in the nested one). What the nested
// region's implicit task changes must not be taken for the borrowing task's ICVs: after the
// task, its creator still has bind-var close and its own nthreads-var.
// oxiomp-test: threads=1,2,4
// oxiomp-test: env=OMP_PROC_BIND=spread,close,master
// oxiomp-test: env=OMP_MAX_ACTIVE_LEVELS=2
// Built at -O0: at -O2 this program did not catch a runtime that let the nested region's
// implicit task save into the borrowing task's slot (the shipped bug it was written for);
// at -O0 and -O1 it does. Why -O2 hides it is not understood yet.
// oxiomp-test: cflags=-O0
#include <omp.h>

#include "check.h"

int main(void) {
  for (int rep = 0; rep < 20; rep++) {
#pragma omp parallel
    {
      int me = omp_get_thread_num();
      omp_set_num_threads(4 + me);
      CHECK_EQ("bind-var in the outer region", omp_get_proc_bind(), omp_proc_bind_close);
#pragma omp task final(1)
      {
#pragma omp parallel num_threads(2)
        {
          CHECK_EQ("bind-var in the nested region", omp_get_proc_bind(), omp_proc_bind_master);
          omp_set_num_threads(40); /* the nested implicit task's own change */
        }
        CHECK_EQ("the task's bind-var after its nested region", omp_get_proc_bind(), omp_proc_bind_close);
        CHECK_EQ("the task's nthreads-var after its nested region", omp_get_max_threads(), 4 + me);
      }
      CHECK_EQ("the creator's bind-var after the task", omp_get_proc_bind(), omp_proc_bind_close);
      CHECK_EQ("the creator's nthreads-var after the task", omp_get_max_threads(), 4 + me);
    }
  }
  return failures != 0;
}
