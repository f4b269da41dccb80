# Summarises benches/interleaved.rs tables over many sizes: per algorithm
# and operation, the lowest ratio and where, the median, and every size
# under 1.00x (scripts/perf-record.sh's size sweep).
#   awk -f scripts/sweep-summary.awk <interleaved output>
function flush(   k, n, i, j, t, lo, at, under, arr, m) {
    for (k in count) {
        n = count[k]
        for (i = 1; i <= n; i++) arr[i] = ratio[k, i]
        for (i = 2; i <= n; i++) {          # insertion sort (n is small)
            t = arr[i]
            for (j = i - 1; j >= 1 && arr[j] > t; j--) arr[j + 1] = arr[j]
            arr[j + 1] = t
        }
        m = (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
        lo = 99; at = ""; under = ""
        for (i = 1; i <= n; i++) {
            if (ratio[k, i] < lo) { lo = ratio[k, i]; at = size[k, i] }
            if (ratio[k, i] < 1.0) under = under (under == "" ? "" : ", ") size[k, i] " (" sprintf("%.2f", ratio[k, i]) "×)"
        }
        split(k, parts, SUBSEP)
        printf "| %s | %s | %s | %.2f× at %s B | %.2f× | %s |\n", parts[1], parts[2], engine[k], lo, at, m, (under == "" ? "none" : under) | "sort"
    }
    close("sort")
    delete count; delete ratio; delete size; delete engine
}
/^\| [a-z0-9]+ \| op \|/ {
    alg = $2; gsub(/[| ]/, "", alg)
    eng = $(NF - 2); gsub(/^ +| +$/, "", eng)
    next
}
/^\| [0-9]+ \| (seal|open) \|/ {
    split($0, f, "|")
    s = f[2]; gsub(/ /, "", s)
    op = f[3]; gsub(/ /, "", op)
    r = f[length(f) - 1]; gsub(/[ ×]/, "", r)
    k = alg SUBSEP op
    count[k]++
    ratio[k, count[k]] = r + 0
    size[k, count[k]] = s
    engine[k] = eng
}
END {
    print "| alg | op | ours | lowest | median | sizes under 1.00× |"
    print "|---|---|---|---|---|---|"
    flush()
}
