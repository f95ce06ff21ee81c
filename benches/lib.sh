# lib.sh - helpers the benchmark scripts share (sourced, not run).

# median: the median of the whitespace-separated numbers on stdin (prints nothing for none).
median() {
    tr ' ' '\n' | awk 'NF' | sort -g | awk '{ a[NR] = $1 } END {
        if (NR == 0) exit; if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# quotient A B: A / B to 4 decimals; nothing unless both are positive numbers (a failed run).
quotient() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.4f", a / b }'; }
