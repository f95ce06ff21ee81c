// pthreads_end_tasks.c - a thread of the program that ends while a task it generated outside
// any region is still incomplete (detached, its event fulfilled by another thread): the
// thread's end waits for it, as a region's end would, and only then is its descriptor given
// to the next thread (it used to be handed on at once, and the fulfilment then completed a
// task of a team that had been reset for another thread).
//  * thread A creates a detached task at level 0 and returns; thread B, started while A's
//    task waits, runs a region; the main thread fulfils A's event, then joins A;
//  * the task's body ran, A's join returns after the fulfilment, and fifty more threads that
//    may get A's descriptor run regions with full teams.
// oxiomp-test: cflags=-lpthread
// oxiomp-test: reference=skip
// oxiomp-test: gcc-reference=skip
// (libgomp hangs at the end of a program thread with tasks pending.)
// (libomp 19 deadlocks here: A's end waits for its task while holding the lock B needs to
// register as a new thread, and the event is fulfilled only after B.)
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "check.h"

static omp_event_handle_t ev;
static int published, body_ran, fulfilled;
static int bad_team;

static void *detaching(void *arg) {
  (void)arg;
  omp_event_handle_t e;
#pragma omp task detach(e)
  __atomic_store_n(&body_ran, 1, __ATOMIC_RELAXED);
  ev = e;
  __atomic_store_n(&published, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void *region(void *arg) {
  (void)arg;
  int count = 0, want = omp_get_max_threads() < 4 ? omp_get_max_threads() : 4;
#pragma omp parallel num_threads(want) shared(count)
  __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
  if (count != want) __atomic_fetch_add(&bad_team, 1, __ATOMIC_RELAXED);
  return NULL;
}

int main(void) {
  (void)omp_get_thread_num();
  for (int round = 0; round < 20; round++) {
    pthread_t a, b;
    published = body_ran = fulfilled = 0;
    pthread_create(&a, NULL, detaching, NULL);
    while (!__atomic_load_n(&published, __ATOMIC_ACQUIRE)) sched_yield();
    usleep(2000); /* A is at its end, waiting for its task */
    pthread_create(&b, NULL, region, NULL);
    pthread_join(b, NULL);
    __atomic_store_n(&fulfilled, 1, __ATOMIC_RELAXED);
    omp_fulfill_event(ev);
    pthread_join(a, NULL);
    CHECK_EQ("the detached task's body ran", body_ran, 1);
  }
  for (int i = 0; i < 50; i++) {
    pthread_t t;
    pthread_create(&t, NULL, region, NULL);
    pthread_join(t, NULL);
  }
  CHECK_EQ("regions without their full team", bad_team, 0);
  return failures != 0;
}
