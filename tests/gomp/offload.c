// A `target` region in a gcc-built program: oxiomp provides no offloading, so the call ends
// the program with an error naming the entry (libgomp runs the region on the host).
#include <stdio.h>

int main(void) {
    int x = 1;
#pragma omp target map(tofrom : x)
    x += 1;
    printf("x = %d\n", x);
    return 0;
}
