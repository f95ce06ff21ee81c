// task_untied_if0.c - an untied task whose `if` clause is false: every part of it runs on
// its creator's stack (clang still splits it at its scheduling points and re-submits it
// through __kmpc_omp_task), the ICVs it changes survive those points and die with it, its
// children inherit them, and the creator goes on with its own.
// Debian's libomp 19 asserts at kmp_tasking.cpp:1836 on an untied task with a false `if`
// clause, hence no reference run.
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: reference=skip
#include <omp.h>

#include "icv_check.h"

int main(void) {
  for (int rep = 0; rep < 50; rep++) {
#pragma omp parallel
    {
      int me = omp_get_thread_num();
      omp_set_num_threads(5 + me);
      omp_set_schedule(omp_sched_dynamic, 7 + me);
      int zero = rep < 0, seen = 0, ran = 0;
#pragma omp task untied if (zero) shared(seen, ran)
      {
        ran = 1;
        omp_set_num_threads(70 + me);
#pragma omp taskyield
        CHECK_EQ("an untied if(0) task's change survives taskyield", omp_get_max_threads(), 70 + me);
        omp_set_schedule(omp_sched_static, 3 + me);
#pragma omp task shared(seen)
        seen = omp_get_max_threads();
#pragma omp taskwait
        CHECK_EQ("its child inherits the change", seen, 70 + me);
        omp_sched_t kind;
        int chunk;
        omp_get_schedule(&kind, &chunk);
        CHECK_EQ("and a second change survives taskwait", chunk, 3 + me);
      }
      CHECK_EQ("the undeferred task ran before the creator went on", ran, 1);
      check_base("the creator after an untied if(0) task", 5 + me, 7 + me);
    }
  }
  return failures != 0;
}
