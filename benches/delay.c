/* delay.c - EPCC's delay, compiled once (by gcc) and linked into both overhead
 * binaries, so that the clang binary on oxiomp/libomp and the gcc binary on
 * libgomp time the very same machine code: compiled separately, the two
 * compilers' delay loops differed by a few percent in speed between the
 * reference loop and the construct, which showed as tens of nanoseconds of
 * "overhead" for CRITICAL and LOCK at 2 threads (more than libgomp's whole cost).
 *
 * A dependent float add chain the compiler can neither vectorise (no
 * -ffast-math) nor drop (the result is tested). Purely thread-local: no shared
 * writes that would add cache-line traffic. */
#include <stdio.h>

void delay(int length) {
    float a = 0.0f;
    for (int i = 0; i < length; i++)
        a += (float)i;
    if (a < 0)
        printf("%f\n", a);
}
