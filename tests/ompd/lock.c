// Thread 1 blocks on a lock thread 0 holds; thread 0 stops once thread 1 has been waiting a
// while, after printing the lock's address.
#include <omp.h>
#include <stdio.h>
#include <unistd.h>
void stop_here(void) { __asm__ volatile("" ::: "memory"); }
static omp_lock_t lock;
static int about_to_wait;
int main(void) {
  omp_init_lock(&lock);
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 0) {
      omp_set_lock(&lock);
#pragma omp barrier
      while (!__atomic_load_n(&about_to_wait, __ATOMIC_ACQUIRE))
        usleep(1000);
      usleep(500000);
      printf("expect wait_lock %lu\n", (unsigned long)&lock);
      fflush(stdout);
      stop_here();
      omp_unset_lock(&lock);
    } else {
#pragma omp barrier
      __atomic_store_n(&about_to_wait, 1, __ATOMIC_RELEASE);
      omp_set_lock(&lock);
      omp_unset_lock(&lock);
    }
  }
  omp_destroy_lock(&lock);
  return 0;
}
