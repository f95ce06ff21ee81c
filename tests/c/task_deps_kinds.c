// task_deps_kinds.c - each dependence type and form on its own (__kmpc_omp_task_with_deps,
// __kmpc_omp_taskwait_deps_51), every scenario repeated:
//  * out -> in, in, in -> out: readers see the first writer's value, the second writer starts
//    only after every reader has finished; an in task created after its writer completed runs
//  * groups: in x4 -> inoutset x4 -> in x4 -> mutexinoutset x4 -> inoutset x4 ->
//    mutexinoutset x4 -> out: every task starts only after the whole previous group finished
//  * mutexinoutset: never two members at once (an "inside" counter and a non-atomic
//    read ... yield ... write increment); tasks on (a), (b) and (a, b) exclude per address; a
//    reader after them sees every increment
//  * depend(out: omp_all_memory) / depend(inout: omp_all_memory): start after every earlier
//    sibling with a dependence (out, in, mutexinoutset, inoutset on different addresses);
//    later siblings with a dependence (also on an address not seen before) start after it
//  * array sections a[0:4] (also as p[0:4] through a pointer; a[4:4] disjoint from it), the
//    whole array `c` against c[0:8] (same storage), and iterator dependences (iterator(i=0:n)
//    in, iterator(i=0:n:2) inout, an empty iterator range)
//  * depobj: init depend(inout: x), depend(depobj: o), update(in), update(mutexinoutset),
//    update(inoutset), destroy; a depobj on an array section
//  * taskwait depend(in: x): the writer of x has finished when it returns; taskwait
//    depend(inout: x) also waits for x's readers (task_deps_taskwait_only.c checks that it
//    does not wait for unrelated tasks)
//  * task if(0) depend(...): runs after its predecessors, in the encountering task, before the
//    encountering task goes on; also with mutexinoutset (exclusion still holds)
//  * dependences between tasks of different parents do not order them (only completion and the
//    count are checked)
// oxiomp-test: threads=1,2,4,16
// oxiomp-test: gcc=skip: the inoutset dependence kind, which gcc 12 does not parse
#include <omp.h>
#include <sched.h>
#include <stdio.h>

#include "check.h"

#define REPS 24

static void pause_a_little(void) {
  for (int k = 0; k < 2; k++) {
    for (volatile int j = 0; j < 200; j++) {
    }
    sched_yield();
  }
}

static int ld(int *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void st(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
static int inc(int *p) { return __atomic_fetch_add(p, 1, __ATOMIC_SEQ_CST); }
static void dec(int *p) { __atomic_fetch_sub(p, 1, __ATOMIC_SEQ_CST); }

/* ---- out -> in, in, in -> out ---- */
static void out_in_out(int rep) {
  int x = 0, readers = 0, second = 0, late = 0;
#pragma omp task depend(out : x) shared(x)
  {
    pause_a_little();
    st(&x, rep + 1);
  }
  for (int r = 0; r < 3; r++) {
#pragma omp task depend(in : x) shared(x, readers) firstprivate(rep)
    {
      CHECK_EQ("out->in: reader sees the writer's value", ld(&x), rep + 1);
      pause_a_little();
      inc(&readers);
    }
  }
#pragma omp task depend(out : x) shared(x, readers, second)
  {
    CHECK_EQ("in->out: readers finished before the second writer", ld(&readers), 3);
    st(&x, -1);
    second = 1;
  }
#pragma omp taskwait
  CHECK_EQ("out->in->out: second writer ran", second, 1);
  /* a task whose only predecessor has long completed */
#pragma omp task depend(in : x) shared(x, late)
  {
    CHECK_EQ("in after a completed writer", ld(&x), -1);
    late = 1;
  }
#pragma omp taskwait
  CHECK_EQ("in after a completed writer ran", late, 1);
}

/* ---- groups of in / inoutset / mutexinoutset ---- */
#define G 4
static void groups(void) {
  int x = 0, v = 0, inside = 0;
  int done[6] = {0, 0, 0, 0, 0, 0};
  int final = 0;
  /* group 0: in */
  for (int i = 0; i < G; i++) {
#pragma omp task depend(in : x) shared(done, v)
    {
      CHECK_EQ("in group 0 sees the initial value", ld(&v), 0);
      pause_a_little();
      inc(&done[0]);
    }
  }
  /* group 1: inoutset */
  for (int i = 0; i < G; i++) {
#pragma omp task depend(inoutset : x) shared(done, v) firstprivate(i)
    {
      CHECK_EQ("inoutset group after in group: all readers finished", ld(&done[0]), G);
      pause_a_little();
      __atomic_fetch_add(&v, i + 1, __ATOMIC_SEQ_CST);
      inc(&done[1]);
    }
  }
  /* group 2: in */
  for (int i = 0; i < G; i++) {
#pragma omp task depend(in : x) shared(done, v)
    {
      CHECK_EQ("in group after inoutset group: all members finished", ld(&done[1]), G);
      CHECK_EQ("in group after inoutset group: value", ld(&v), G * (G + 1) / 2);
      pause_a_little();
      inc(&done[2]);
    }
  }
  /* group 3: mutexinoutset */
  for (int i = 0; i < G; i++) {
#pragma omp task depend(mutexinoutset : x) shared(done, v, inside)
    {
      CHECK_EQ("mutexinoutset group after in group: all readers finished", ld(&done[2]), G);
      CHECK_EQ("mutexinoutset members at once", inc(&inside), 0);
      int c = ld(&v);
      pause_a_little();
      st(&v, c + 100);
      dec(&inside);
      inc(&done[3]);
    }
  }
  /* group 4: inoutset right after mutexinoutset */
  for (int i = 0; i < G; i++) {
#pragma omp task depend(inoutset : x) shared(done, v)
    {
      CHECK_EQ("inoutset group after mutexinoutset group: all members finished", ld(&done[3]), G);
      pause_a_little();
      __atomic_fetch_add(&v, 1000, __ATOMIC_SEQ_CST);
      inc(&done[4]);
    }
  }
  /* group 5: mutexinoutset right after inoutset */
  for (int i = 0; i < G; i++) {
#pragma omp task depend(mutexinoutset : x) shared(done, v, inside)
    {
      CHECK_EQ("mutexinoutset group after inoutset group: all members finished", ld(&done[4]), G);
      CHECK_EQ("mutexinoutset members at once", inc(&inside), 0);
      int c = ld(&v);
      pause_a_little();
      st(&v, c + 10000);
      dec(&inside);
      inc(&done[5]);
    }
  }
#pragma omp task depend(out : x) shared(done, v, final)
  {
    CHECK_EQ("out after mutexinoutset group: all members finished", ld(&done[5]), G);
    CHECK_EQ("out after the groups: value", ld(&v), G * (G + 1) / 2 + G * 100 + G * 1000 + G * 10000);
    final = 1;
  }
#pragma omp taskwait
  CHECK_EQ("groups: final out ran", final, 1);
}

/* ---- mutexinoutset exclusion on one and two addresses ---- */
#define NM 12
static void mutex(int rep) {
  int a = 0, b = 0, in_a = 0, in_b = 0, ca = 0, cb = 0, seen_a = -1, seen_b = -1;
  for (int i = 0; i < NM; i++) {
    int which = (i + rep) % 3; /* 0: a, 1: b, 2: a and b */
    if (which == 0) {
#pragma omp task depend(mutexinoutset : a) shared(in_a, ca)
      {
        CHECK_EQ("mutexinoutset on a: members at once", inc(&in_a), 0);
        int c = ld(&ca);
        pause_a_little();
        st(&ca, c + 1);
        dec(&in_a);
      }
    } else if (which == 1) {
#pragma omp task depend(mutexinoutset : b) shared(in_b, cb)
      {
        CHECK_EQ("mutexinoutset on b: members at once", inc(&in_b), 0);
        int c = ld(&cb);
        pause_a_little();
        st(&cb, c + 1);
        dec(&in_b);
      }
    } else {
#pragma omp task depend(mutexinoutset : a, b) shared(in_a, in_b, ca, cb)
      {
        CHECK_EQ("mutexinoutset on a, b: members on a at once", inc(&in_a), 0);
        CHECK_EQ("mutexinoutset on a, b: members on b at once", inc(&in_b), 0);
        int c = ld(&ca), d = ld(&cb);
        pause_a_little();
        st(&ca, c + 1);
        st(&cb, d + 1);
        dec(&in_b);
        dec(&in_a);
      }
    }
  }
#pragma omp task depend(in : a) shared(ca, seen_a)
  seen_a = ld(&ca);
#pragma omp task depend(in : b) shared(cb, seen_b)
  seen_b = ld(&cb);
#pragma omp taskwait
  int na = 0, nb = 0;
  for (int i = 0; i < NM; i++) {
    int which = (i + rep) % 3;
    na += which != 1;
    nb += which != 0;
  }
  CHECK_EQ("reader after mutexinoutset on a sees every increment", seen_a, na);
  CHECK_EQ("reader after mutexinoutset on b sees every increment", seen_b, nb);
}

/* ---- omp_all_memory ---- */
static void all_memory(void) {
  int x = 0, y = 0, z = 0, w = 0, fresh = 0;
  int before = 0, all_done = 0, after = 0, all2_done = 0;
#pragma omp task depend(out : x) shared(x, before)
  {
    pause_a_little();
    st(&x, 1);
    inc(&before);
  }
#pragma omp task depend(in : y) shared(before)
  {
    pause_a_little();
    inc(&before);
  }
#pragma omp task depend(mutexinoutset : z) shared(before)
  {
    pause_a_little();
    inc(&before);
  }
#pragma omp task depend(inoutset : w) shared(before)
  {
    pause_a_little();
    inc(&before);
  }
#pragma omp task depend(out : omp_all_memory) shared(x, before, all_done)
  {
    CHECK_EQ("out: omp_all_memory after every earlier sibling with a dependence", ld(&before), 4);
    CHECK_EQ("out: omp_all_memory sees the writer of x", ld(&x), 1);
    pause_a_little();
    st(&all_done, 1);
  }
#pragma omp task depend(in : x) shared(all_done, after)
  {
    CHECK_EQ("in: x after out: omp_all_memory", ld(&all_done), 1);
    inc(&after);
  }
#pragma omp task depend(inoutset : y) shared(all_done, after)
  {
    CHECK_EQ("inoutset: y after out: omp_all_memory", ld(&all_done), 1);
    inc(&after);
  }
#pragma omp task depend(out : fresh) shared(all_done, after)
  {
    CHECK_EQ("out on a new address after out: omp_all_memory", ld(&all_done), 1);
    inc(&after);
  }
#pragma omp task depend(mutexinoutset : z) shared(all_done, after)
  {
    CHECK_EQ("mutexinoutset: z after out: omp_all_memory", ld(&all_done), 1);
    pause_a_little();
    inc(&after);
  }
#pragma omp task depend(inout : omp_all_memory) shared(after, all2_done)
  {
    CHECK_EQ("inout: omp_all_memory after every sibling since the previous one", ld(&after), 4);
    st(&all2_done, 1);
  }
  /* two omp_all_memory tasks in a row, then a reader */
#pragma omp task depend(out : omp_all_memory) shared(all2_done)
  {
    CHECK_EQ("out: omp_all_memory after inout: omp_all_memory", ld(&all2_done), 1);
    st(&all2_done, 2);
  }
#pragma omp task depend(in : w) shared(all2_done)
  CHECK_EQ("in: w after two omp_all_memory tasks", ld(&all2_done), 2);
#pragma omp taskwait
  CHECK_EQ("omp_all_memory: last one ran", all2_done, 2);
}

/* ---- array sections and iterators ---- */
#define NB 16
static void sections_iterators(int rep) {
  int a[8] = {0}, b[NB] = {0}, c[8] = {0}, readers = 0, done = 0;
  int *p = a;
#pragma omp task depend(out : a[0 : 4]) shared(a) firstprivate(rep)
  {
    pause_a_little();
    for (int i = 0; i < 4; i++) st(&a[i], rep + i);
  }
  for (int r = 0; r < 3; r++) {
#pragma omp task depend(in : p[0 : 4]) shared(a, readers) firstprivate(rep)
    {
      for (int i = 0; i < 4; i++) CHECK_EQ("in: p[0:4] after out: a[0:4]", ld(&a[i]), rep + i);
      pause_a_little();
      inc(&readers);
    }
  }
#pragma omp task depend(inout : a[0 : 4]) shared(a, readers)
  {
    CHECK_EQ("inout: a[0:4] after the readers of p[0:4]", ld(&readers), 3);
    st(&a[0], -1);
  }
  /* a[4:4] is disjoint from a[0:4]: no order with the tasks above (only completion) */
#pragma omp task depend(out : a[4 : 4]) shared(a)
  st(&a[7], 77);
  /* the whole array c, against c[0:8] (the same storage) */
#pragma omp task depend(out : c) shared(c)
  {
    pause_a_little();
    st(&c[7], 77);
  }
#pragma omp task depend(in : c[0 : 8]) shared(c)
  CHECK_EQ("in: c[0:8] after out: c", ld(&c[7]), 77);
#pragma omp task depend(inout : c[0 : 8]) shared(c)
  st(&c[0], 1);
#pragma omp task depend(in : c) shared(c)
  CHECK_EQ("in: c after inout: c[0:8]", ld(&c[0]), 1);

  /* iterators */
  for (int i = 0; i < NB; i++) {
#pragma omp task depend(out : b[i]) shared(b) firstprivate(i, rep)
    {
      if (i % 3 == 0) pause_a_little();
      st(&b[i], rep + i);
    }
  }
  int n = NB;
#pragma omp task depend(iterator(i = 0 : n), in : b[i]) shared(b, done) firstprivate(rep)
  {
    for (int i = 0; i < NB; i++) CHECK_EQ("iterator in: b[i] after out: b[i]", ld(&b[i]), rep + i);
    inc(&done);
  }
#pragma omp task depend(iterator(i = 0 : n : 2), inout : b[i]) shared(b, done) firstprivate(rep)
  {
    CHECK_EQ("iterator inout b[even] after iterator in b[i]", ld(&done), 1);
    for (int i = 0; i < NB; i += 2) st(&b[i], ld(&b[i]) + 1000);
    pause_a_little();
  }
  int zero = 0, empty_ran = 0;
#pragma omp task depend(iterator(i = 0 : zero), in : b[i]) shared(empty_ran)
  inc(&empty_ran);
  for (int i = 0; i < NB; i++) {
#pragma omp task depend(in : b[i]) shared(b) firstprivate(i, rep)
    CHECK_EQ("in: b[i] after iterator inout b[even]", ld(&b[i]), rep + i + (i % 2 == 0 ? 1000 : 0));
  }
#pragma omp taskwait
  CHECK_EQ("iterator in task ran", done, 1);
  CHECK_EQ("task with an empty iterator range ran", empty_ran, 1);
}

/* ---- depobj ---- */
static void depobj(int rep) {
  int x = 0, readers = 0, inside = 0, cnt = 0, set = 0, fin = 0;
  int a[4] = {0};
  omp_depend_t o, oa;
#pragma omp depobj(o) depend(inout : x)
#pragma omp depobj(oa) depend(out : a[0 : 4])
#pragma omp task depend(depobj : o) shared(x) firstprivate(rep)
  {
    pause_a_little();
    st(&x, rep + 1);
  }
#pragma omp depobj(o) update(in)
  for (int r = 0; r < 3; r++) {
#pragma omp task depend(depobj : o) shared(x, readers) firstprivate(rep)
    {
      CHECK_EQ("depobj in after depobj inout", ld(&x), rep + 1);
      pause_a_little();
      inc(&readers);
    }
  }
#pragma omp task depend(out : x) shared(x, readers)
  {
    CHECK_EQ("out after depobj readers", ld(&readers), 3);
    st(&x, 0);
  }
#pragma omp depobj(o) update(mutexinoutset)
  for (int r = 0; r < 4; r++) {
#pragma omp task depend(depobj : o) shared(x, inside, cnt)
    {
      CHECK_EQ("depobj mutexinoutset members at once", inc(&inside), 0);
      int c = ld(&cnt);
      pause_a_little();
      st(&cnt, c + 1);
      dec(&inside);
    }
  }
#pragma omp depobj(o) update(inoutset)
  for (int r = 0; r < 4; r++) {
#pragma omp task depend(depobj : o) shared(cnt, set)
    {
      CHECK_EQ("depobj inoutset after depobj mutexinoutset", ld(&cnt), 4);
      pause_a_little();
      inc(&set);
    }
  }
#pragma omp depobj(o) update(out)
#pragma omp task depend(depobj : o) shared(set, fin)
  {
    CHECK_EQ("depobj out after depobj inoutset", ld(&set), 4);
    fin = 1;
  }
  /* array section in a depobj */
#pragma omp task depend(depobj : oa) shared(a)
  {
    pause_a_little();
    st(&a[3], 3);
  }
#pragma omp task depend(in : a[0 : 4]) shared(a)
  CHECK_EQ("in: a[0:4] after depobj out: a[0:4]", ld(&a[3]), 3);
#pragma omp taskwait
  CHECK_EQ("depobj: last task ran", fin, 1);
#pragma omp depobj(o) destroy
#pragma omp depobj(oa) destroy
}

/* ---- taskwait depend ---- */
static void taskwait_depend(int rep) {
  int x = 0, y = 0, readers = 0;
#pragma omp task depend(out : x) shared(x) firstprivate(rep)
  {
    pause_a_little();
    st(&x, rep + 1);
  }
#pragma omp task depend(out : y) shared(y)
  {
    pause_a_little();
    st(&y, 1);
  }
#pragma omp taskwait depend(in : x)
  CHECK_EQ("taskwait depend(in: x): writer of x finished", ld(&x), rep + 1);
#pragma omp taskwait depend(inout : y)
  CHECK_EQ("taskwait depend(inout: y): writer of y finished", ld(&y), 1);
  /* a writer, then a reader: taskwait depend(in) needs only the writer, depend(out) both */
#pragma omp task depend(out : x) shared(x)
  {
    pause_a_little();
    st(&x, -5);
  }
#pragma omp task depend(in : x) shared(readers)
  {
    pause_a_little();
    inc(&readers);
  }
#pragma omp taskwait depend(in : x)
  CHECK_EQ("taskwait depend(in: x) after writer and reader: writer finished", ld(&x), -5);
#pragma omp taskwait depend(out : x)
  CHECK_EQ("taskwait depend(out: x): reader finished", ld(&readers), 1);
  /* on an address no task used: returns at once */
  int fresh = 0;
#pragma omp taskwait depend(in : fresh)
  /* with inoutset and mutexinoutset predecessors */
  int cnt = 0;
  for (int i = 0; i < 3; i++) {
#pragma omp task depend(inoutset : y) shared(cnt)
    {
      pause_a_little();
      inc(&cnt);
    }
  }
  for (int i = 0; i < 3; i++) {
#pragma omp task depend(mutexinoutset : x) shared(cnt)
    {
      pause_a_little();
      __atomic_fetch_add(&cnt, 10, __ATOMIC_SEQ_CST);
    }
  }
#pragma omp taskwait depend(in : y, x)
  CHECK_EQ("taskwait depend(in: y, x) after inoutset and mutexinoutset groups", ld(&cnt), 33);
#pragma omp taskwait
}

/* ---- task if(0) depend ---- */
static void undeferred(int rep) {
  int x = 0, readers = 0, ran = 0, inside = 0, cnt = 0;
#pragma omp task depend(out : x) shared(x) firstprivate(rep)
  {
    pause_a_little();
    st(&x, rep + 1);
  }
#pragma omp task if (0) depend(in : x) shared(x, ran) firstprivate(rep)
  {
    CHECK_EQ("task if(0) depend(in: x) after the writer", ld(&x), rep + 1);
    ran = 1;
  }
  CHECK_EQ("task if(0) depend(in: x) ran before the encountering task went on", ran, 1);
  for (int r = 0; r < 3; r++) {
#pragma omp task depend(in : x) shared(readers)
    {
      pause_a_little();
      inc(&readers);
    }
  }
#pragma omp task if (0) depend(out : x) shared(x, readers, ran)
  {
    CHECK_EQ("task if(0) depend(out: x) after the readers", ld(&readers), 3);
    st(&x, -1);
    ran = 2;
  }
  CHECK_EQ("task if(0) depend(out: x) ran before the encountering task went on", ran, 2);
#pragma omp task depend(in : x) shared(x)
  CHECK_EQ("in: x after task if(0) depend(out: x)", ld(&x), -1);
  /* mutexinoutset: exclusion also holds for the undeferred one */
  for (int r = 0; r < 3; r++) {
#pragma omp task depend(mutexinoutset : x) shared(inside, cnt)
    {
      CHECK_EQ("mutexinoutset members at once (with an if(0) one)", inc(&inside), 0);
      int c = ld(&cnt);
      pause_a_little();
      st(&cnt, c + 1);
      dec(&inside);
    }
  }
#pragma omp task if (0) depend(mutexinoutset : x) shared(inside, cnt, ran)
  {
    CHECK_EQ("undeferred mutexinoutset member runs alone", inc(&inside), 0);
    int c = ld(&cnt);
    pause_a_little();
    st(&cnt, c + 1);
    dec(&inside);
    ran = 3;
  }
  CHECK_EQ("task if(0) depend(mutexinoutset: x) ran", ran, 3);
#pragma omp taskwait
  CHECK_EQ("mutexinoutset with an if(0) member: count", cnt, 4);
}

/* ---- different parents: no ordering, just completion ---- */
static int shared_z;
static void different_parents(void) {
  int total = 0;
  for (int p = 0; p < 3; p++) {
#pragma omp task shared(total)
    {
      for (int i = 0; i < 10; i++) {
#pragma omp task depend(inout : shared_z) shared(total)
        {
          if (i % 4 == 0) pause_a_little();
          inc(&total);
        }
      }
#pragma omp taskwait
    }
  }
#pragma omp taskwait
  CHECK_EQ("tasks of different parents on one address all ran", total, 30);
}

int main(void) {
  for (int rep = 0; rep < REPS; rep++) {
#pragma omp parallel
#pragma omp single
    {
      out_in_out(rep);
      groups();
      mutex(rep);
      all_memory();
      sections_iterators(rep);
      depobj(rep);
      taskwait_depend(rep);
      undeferred(rep);
      different_parents();
    }
  }
  /* the same scenarios from an explicit task, and from several implicit tasks at once */
  for (int rep = 0; rep < REPS / 4; rep++) {
#pragma omp parallel
    {
#pragma omp single
#pragma omp task
      {
        out_in_out(rep);
        groups();
        mutex(rep);
      }
      if (omp_get_thread_num() < 3) {
        all_memory();
        sections_iterators(rep);
        depobj(rep);
        taskwait_depend(rep);
        undeferred(rep);
      }
    }
  }
  return failures != 0;
}
