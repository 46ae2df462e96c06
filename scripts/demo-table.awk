# scripts/demo-table.awk -- a table of read sources x categories from 'sbf classify' FASTQ output.
#
# Usage: awk -v categories=human_chr20,ecoli,lambda,multi,none -f scripts/demo-table.awk TAGGED.fq
#
# The reads' names carry their true source before a ':' (e.g. '@ecoli:17/1'); the category is
# the value of the sb:Z: tag that sbf classify appended to the name line. Prints, per source,
# its number of reads and the percentage of them in each category. Plain POSIX awk.

BEGIN {
    ncat = split(categories, cat, ",")
    if (ncat == 0) { print "demo-table: give -v categories=a,b,..." > "/dev/stderr"; err = 1; exit 1 }
    nsrc = 0
}

NR % 4 == 1 {
    name = substr($1, 2)
    if (index(name, ":") == 0) next
    src = substr(name, 1, index(name, ":") - 1)
    c = ""
    for (i = 2; i <= NF; i++) if ($i ~ /^sb:Z:/) c = substr($i, 6)
    if (c == "") {
        printf "demo-table: record %s has no sb:Z: tag (not sbf classify output?)\n", name > "/dev/stderr"
        err = 1; exit 1
    }
    if (!(src in reads)) source[++nsrc] = src
    reads[src]++
    count[src, c]++
}

END {
    if (err) exit 1
    if (nsrc == 0) { print "demo-table: no reads with a source in their name" > "/dev/stderr"; exit 1 }
    w0 = length("source")
    for (s = 1; s <= nsrc; s++) if (length(source[s]) > w0) w0 = length(source[s])
    printf "%-*s  %6s", w0, "source", "pairs"
    for (c = 1; c <= ncat; c++) { w[c] = length(cat[c]) < 6 ? 6 : length(cat[c]); printf "  %*s", w[c], cat[c] }
    printf "\n"
    for (s = 1; s <= nsrc; s++) {
        n = reads[source[s]]
        printf "%-*s  %6d", w0, source[s], n
        for (c = 1; c <= ncat; c++) printf "  %*s", w[c], sprintf("%.2f%%", 100 * count[source[s], cat[c]] / n)
        printf "\n"
    }
}
