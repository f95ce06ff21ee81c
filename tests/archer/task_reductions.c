// archer: clean
// archer-libomp: race
// Task reductions (a taskgroup's task_reduction with in_reduction tasks) and a taskloop
// reduction. On libomp, Archer reports races in them: its runtime combines the threads'
// copies at the taskgroup's end before it tells the tool the group's tasks are complete.
// That race needs a task to update another thread's copy, so every task first waits until
// two threads have started one (the other threads steal queued tasks meanwhile).
#include <omp.h>
#include <sched.h>

static unsigned started;

static void two_threads_in(void) {
  __atomic_fetch_or(&started, 1u << (omp_get_thread_num() & 31), __ATOMIC_ACQ_REL);
  while (__builtin_popcount(__atomic_load_n(&started, __ATOMIC_ACQUIRE)) < 2)
    sched_yield();
}

int main(void) {
  int sum = 0, x = 0;
  long prod = 1;
#pragma omp parallel
#pragma omp single
  {
#pragma omp taskgroup task_reduction(+ : sum) task_reduction(* : prod)
    {
      for (int i = 1; i <= 20; i++) {
#pragma omp task in_reduction(+ : sum) in_reduction(* : prod)
        {
          two_threads_in();
          sum += i;
          if (i <= 10)
            prod *= 2;
        }
      }
    }
    x = sum;
    started = 0;
#pragma omp taskloop reduction(+ : x) grainsize(10)
    for (int i = 0; i < 100; i++) {
      if (i % 10 == 0)
        two_threads_in();
      x += i;
    }
  }
  return !(sum == 210 && prod == 1024 && x == 5160);
}
