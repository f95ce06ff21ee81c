// archer: clean
// Tasks ordered by taskwait, taskgroup (with a grandchild) and every dependence kind: out,
// inout, in, mutexinoutset, inoutset; a taskwait with depend.
int main(void) {
  int x = 0, y = 0, z = 0, w = 0, m = 0, s1 = 0, s2 = 0, t = 0, u = 0;
  int arr[2] = {0, 0};
#pragma omp parallel
#pragma omp single
  {
#pragma omp task shared(x)
    x = 1;
#pragma omp taskwait
    x++;
#pragma omp taskgroup
    {
#pragma omp task shared(y)
      {
#pragma omp task shared(y)
        y = 5;
      }
    }
    y++;
#pragma omp task depend(out : z) shared(z)
    z = 1;
#pragma omp task depend(inout : z) shared(z)
    z++;
#pragma omp task depend(in : z) shared(z, w)
    w = z;
#pragma omp task depend(mutexinoutset : m) shared(m)
    m += 1;
#pragma omp task depend(mutexinoutset : m) shared(m)
    m += 2;
#pragma omp task depend(inoutset : s1) shared(arr)
    arr[0] = 1;
#pragma omp task depend(inoutset : s1) shared(arr)
    arr[1] = 2;
#pragma omp task depend(in : s1) depend(in : m) shared(arr, s2, m)
    s2 = arr[0] + arr[1] + m;
#pragma omp task depend(out : t) shared(t)
    t = 7;
#pragma omp taskwait depend(in : t)
    u = t;
#pragma omp taskwait
  }
  return !(x == 2 && y == 6 && z == 2 && w == 2 && m == 3 && s2 == 6 && u == 7);
}
