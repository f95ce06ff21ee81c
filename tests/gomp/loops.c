// gcc's lowering of the loops that need the runtime beyond `long` bounds: `unsigned long
// long` loops (GOMP_loop_ull_*, upward and downward, values above 2^63, every schedule,
// ordered), doacross loops (ordered(2) with depend(sink)/depend(source), long and ull),
// inscan reductions and lastprivate(conditional) on sections (the 5.0 starts' scratch block).
// Exit status 0 when every result holds.
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "../c/check.h"

// gcc warns about its own lowering of lastprivate(conditional:) on sections.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define BIG 0x8000000000000000ULL
#define N 1000

static int hits[N];

static void reset(void) { memset(hits, 0, sizeof hits); }

static int each_once(int n) {
    for (int i = 0; i < n; i++)
        if (hits[i] != 1)
            return 0;
    return 1;
}

int main(void) {
    unsigned long long lo = BIG - 500, hi = BIG + 500;
    // Upward, every schedule gcc sends to the runtime.
    reset();
#pragma omp parallel for schedule(dynamic, 7)
    for (unsigned long long x = lo; x < hi; x++)
        __atomic_fetch_add(&hits[x - lo], 1, __ATOMIC_RELAXED);
    CHECK("ull dynamic", each_once(N));
    reset();
#pragma omp parallel for schedule(guided, 3)
    for (unsigned long long x = lo; x < hi; x++)
        __atomic_fetch_add(&hits[x - lo], 1, __ATOMIC_RELAXED);
    CHECK("ull guided", each_once(N));
    reset();
#pragma omp parallel for schedule(runtime)
    for (unsigned long long x = lo; x < hi; x += 2)
        __atomic_fetch_add(&hits[(x - lo) / 2], 1, __ATOMIC_RELAXED);
    CHECK("ull runtime, step 2", each_once(N / 2));
    reset();
#pragma omp parallel for schedule(static, 5)
    for (unsigned long long x = lo; x < hi; x++)
        __atomic_fetch_add(&hits[x - lo], 1, __ATOMIC_RELAXED);
    CHECK("ull static chunked", each_once(N));
    // Downward, step 3.
    reset();
#pragma omp parallel for schedule(dynamic)
    for (unsigned long long x = hi; x > lo; x -= 3)
        __atomic_fetch_add(&hits[(hi - x) / 3], 1, __ATOMIC_RELAXED);
    CHECK("ull downward dynamic", each_once((N + 2) / 3));
    // lastprivate of a ull loop.
    unsigned long long last = 0;
#pragma omp parallel for schedule(guided) lastprivate(last)
    for (unsigned long long x = lo; x < hi; x++)
        last = x;
    CHECK("ull lastprivate", last == hi - 1);
    // Ordered: the iterations enter in order.
    unsigned long long prev = lo - 1;
    int in_order = 1;
#pragma omp parallel for ordered schedule(dynamic, 4)
    for (unsigned long long x = lo; x < hi; x++) {
#pragma omp ordered
        {
            if (x != prev + 1)
                in_order = 0;
            prev = x;
        }
    }
    CHECK("ull ordered", in_order && prev == hi - 1);

    // Doacross: a 2-D wavefront, each cell after its upper and left neighbours.
    enum { R = 40, C = 30 };
    static int grid[R][C];
    int wave_ok = 1;
#pragma omp parallel for ordered(2) schedule(static, 1)
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
#pragma omp ordered depend(sink : i - 1, j) depend(sink : i, j - 1)
            int up = 0, left = 0;
            if (i > 0)
                up = grid[i - 1][j];
            if (j > 0)
                left = grid[i][j - 1];
            if ((i && !up) || (j && !left))
                wave_ok = 0;
            grid[i][j] = (up > left ? up : left) + 1;
#pragma omp ordered depend(source)
        }
    CHECK("doacross wavefront", wave_ok && grid[R - 1][C - 1] == R + C - 1);
    // The same over unsigned long long iteration variables, dynamically scheduled.
    static int row[200];
    int chain_ok = 1;
#pragma omp parallel for ordered(1) schedule(dynamic, 3)
    for (unsigned long long x = BIG; x < BIG + 200; x++) {
#pragma omp ordered depend(sink : x - 1)
        unsigned long long k = x - BIG;
        if (k && row[k - 1] != (int)k)
            chain_ok = 0;
        row[k] = (int)k + 1;
#pragma omp ordered depend(source)
    }
    CHECK("ull doacross chain", chain_ok && row[199] == 200);

    // Inclusive scan: b[i] = a[0] + ... + a[i] (the team shares a scratch block).
    static int a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = i % 7;
    int s = 0;
#pragma omp parallel for reduction(inscan, + : s)
    for (int i = 0; i < N; i++) {
        s += a[i];
#pragma omp scan inclusive(s)
        b[i] = s;
    }
    int scan_ok = 1, run = 0;
    for (int i = 0; i < N; i++) {
        run += a[i];
        if (b[i] != run)
            scan_ok = 0;
    }
    CHECK("inscan reduction", scan_ok && s == run);

    // lastprivate(conditional:) on sections: the value of the last section that assigned.
    int v = -1;
#pragma omp parallel sections lastprivate(conditional : v)
    {
#pragma omp section
        v = 1;
#pragma omp section
        v = 2;
#pragma omp section
        {
        }
    }
    CHECK("sections lastprivate(conditional)", v == 2);

    if (failures)
        return 1;
    puts("gomp loops: ok");
    return 0;
}
