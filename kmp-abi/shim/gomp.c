// gomp.c - libgomp's variadic entries, which Rust cannot define: `depend(sink: ...)` of a
// doacross loop passes one iteration number per dimension as arguments. The dimensions come
// from the runtime (the thread's doacross loop); the numbers go to it as an array.

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

size_t oxiomp_gomp_doacross_dims(void);
void oxiomp_gomp_doacross_wait(const unsigned long long *vec, size_t n, bool ull);

void GOMP_doacross_wait(long first, ...) {
    size_t n = oxiomp_gomp_doacross_dims();
    if (n == 0)
        return;
    unsigned long long vec[n];
    vec[0] = (unsigned long long)first;
    va_list ap;
    va_start(ap, first);
    for (size_t i = 1; i < n; i++)
        vec[i] = (unsigned long long)va_arg(ap, long);
    va_end(ap);
    oxiomp_gomp_doacross_wait(vec, n, false);
}

void GOMP_doacross_ull_wait(unsigned long long first, ...) {
    size_t n = oxiomp_gomp_doacross_dims();
    if (n == 0)
        return;
    unsigned long long vec[n];
    vec[0] = first;
    va_list ap;
    va_start(ap, first);
    for (size_t i = 1; i < n; i++)
        vec[i] = va_arg(ap, unsigned long long);
    va_end(ap);
    oxiomp_gomp_doacross_wait(vec, n, true);
}
