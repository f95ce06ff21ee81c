// archer: clean
// archer-libomp: race
// Task reductions (a taskgroup's task_reduction with in_reduction tasks) and a taskloop
// reduction. On libomp, Archer reports races in them: its runtime combines the threads'
// copies at the taskgroup's end before it tells the tool the group's tasks are complete.
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
          sum += i;
          if (i <= 10)
            prod *= 2;
        }
      }
    }
    x = sum;
#pragma omp taskloop reduction(+ : x) grainsize(10)
    for (int i = 0; i < 100; i++)
      x += i;
  }
  return !(sum == 210 && prod == 1024 && x == 5160);
}
