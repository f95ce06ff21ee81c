// gcc's lowering of host teams: a league of num_teams teams (GOMP_teams_reg), each initial
// thread knowing its team, distribute over the league, and a parallel region in a team.
// Exit status 0 when every result holds.
#include <omp.h>
#include <stdio.h>

#include "../c/check.h"

#define N 1000

int main(void) {
    int seen[4] = {0}, nteams = 0, hits[N] = {0}, inner = 0;
#pragma omp teams num_teams(4) thread_limit(2)
    {
        int t = omp_get_team_num();
        if (t >= 0 && t < 4)
            __atomic_fetch_add(&seen[t], 1, __ATOMIC_RELAXED);
        if (t == 0)
            nteams = omp_get_num_teams();
#pragma omp distribute
        for (int i = 0; i < N; i++)
            hits[i]++;
#pragma omp parallel
        {
            if (omp_get_team_num() == t)
                __atomic_fetch_add(&inner, 1, __ATOMIC_RELAXED);
        }
    }
    CHECK_EQ("teams: league size", nteams, 4);
    CHECK("teams: each team's initial thread ran once", seen[0] == 1 && seen[1] == 1 && seen[2] == 1 && seen[3] == 1);
    int once = 1;
    for (int i = 0; i < N; i++)
        if (hits[i] != 1)
            once = 0;
    CHECK("distribute: each iteration once", once);
    CHECK("a team's parallel region sees its team", inner >= 4);

    if (failures)
        return 1;
    puts("gomp teams: ok");
    return 0;
}
