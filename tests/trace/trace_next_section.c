// trace_next_section.c - run with OMP_OVNI=1 by tests/trace.rs: a sections construct of 3
// sections through libomp's dispatch entries (__kmpc_sections_init, __kmpc_next_section,
// __kmpc_end_sections: what compilers newer than clang-19 may emit), in a team of 1, called by
// hand as such a compiler's code would.
#include <omp.h>

typedef struct ident ident_t;
extern int __kmpc_global_thread_num(ident_t *);
extern int __kmpc_sections_init(ident_t *, int);
extern int __kmpc_next_section(ident_t *, int, int);
extern void __kmpc_end_sections(ident_t *, int);

int main(void) {
  int hits[3] = {0, 0, 0}, bad = 0;
#pragma omp parallel num_threads(1) shared(hits, bad)
  {
    int gtid = __kmpc_global_thread_num(0);
    __kmpc_sections_init(0, gtid);
    for (int s; (s = __kmpc_next_section(0, gtid, 3)) != 3;) {
      if (s < 0 || s > 2) bad++;
      else hits[s]++;
    }
    __kmpc_end_sections(0, gtid);
  }
  return !bad && hits[0] == 1 && hits[1] == 1 && hits[2] == 1 ? 0 : 1;
}
