# scripts/demo-table.awk -- summarise 'sbf query' outputs as a table of read sources x targets.
#
# Usage: awk -f scripts/demo-table.awk DIR/SOURCE1.tsv DIR/SOURCE2.tsv ...
#
# Each file is the output of 'sbf query' on the reads of one source, named after it
# (human_chr20.tsv -> row 'human_chr20'): a header '#name<TAB>kmers<TAB>target...' then
# one line per read 'name<TAB>kmers<TAB>hits...'. A read is assigned to a target when at
# least half of its valid k-mers are found there (hits / kmers >= 0.5); a read may be
# assigned to several targets, or to none. Prints, per source, its number of reads, the
# percentage of them assigned to each target and the percentage assigned to no target.
# Plain POSIX awk (mawk, gawk, busybox).

BEGIN { FS = "\t"; nsrc = 0; ntarget = 0; err = 0 }

FNR == 1 {
    if ($1 != "#name" || $2 != "kmers" || NF < 3) {
        printf "demo-table: %s: not an 'sbf query' output (header '#name<TAB>kmers<TAB>target...')\n", FILENAME > "/dev/stderr"
        err = 1; exit 1
    }
    if (ntarget == 0) {
        ntarget = NF - 2
        for (t = 1; t <= ntarget; t++) target[t] = $(t + 2)
    } else if (NF - 2 != ntarget) {
        printf "demo-table: %s: its targets differ from those of the first file\n", FILENAME > "/dev/stderr"
        err = 1; exit 1
    }
    src = FILENAME; sub(/.*\//, "", src); sub(/\.tsv$/, "", src)
    source[++nsrc] = src
    next
}

/^#/ { next }

{
    reads[nsrc]++
    assigned = 0
    for (t = 1; t <= ntarget; t++)
        if ($2 > 0 && $(t + 2) / $2 >= 0.5) { hit[nsrc, t]++; assigned = 1 }
    if (!assigned) none[nsrc]++
}

END {
    if (err) exit 1
    if (nsrc == 0) { print "demo-table: no input" > "/dev/stderr"; exit 1 }

    w0 = length("source")
    for (s = 1; s <= nsrc; s++) if (length(source[s]) > w0) w0 = length(source[s])
    for (t = 1; t <= ntarget; t++) { w[t] = length(target[t]); if (w[t] < 6) w[t] = 6 }
    wn = length("no target")

    printf "%-*s  %5s", w0, "source", "reads"
    for (t = 1; t <= ntarget; t++) printf "  %*s", w[t], target[t]
    printf "  %*s\n", wn, "no target"

    for (s = 1; s <= nsrc; s++) {
        n = reads[s] + 0
        printf "%-*s  %5d", w0, source[s], n
        for (t = 1; t <= ntarget; t++) printf "  %*s", w[t], pct(hit[s, t], n)
        printf "  %*s\n", wn, pct(none[s], n)
    }
}

function pct(k, n) { return n ? sprintf("%.1f%%", 100 * k / n) : "-" }
