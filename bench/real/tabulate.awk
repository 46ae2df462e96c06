# bench/real/tabulate.awk -- one result row of bench/real.sh for one set and one tool.
# Usage: awk -f tabulate.awk -v tool=T -v set=S -v type=Y -v role=R -v sec=N TRUTH CALLS
#   TRUTH: read <TAB> target|unmapped   (minimap2: primary alignment with MAPQ >= 20)
#   CALLS: read <TAB> target|multi|none (the tool; every read of TRUTH must be there)
# Prints: tool set type role reads mapped agree missed multi wrong unmapped unm_assigned
#         agree% wrong% unm_assigned% sec
# role pos: agree = tool target equals the truth target; missed = mapped but none or multi
#   (multi counts those that were multi); wrong = mapped, the tool names another target;
#   unm_assigned = unmapped by minimap2 but the tool names a target. agree% and wrong% are
#   of mapped, unm_assigned% of unmapped.
# role neg/synth: no read's organism is in the index, so every read the tool assigns to a
#   target is wrong (wrong% is of all reads); agree and missed are 0.
# role chimera: every read joins reads of two indexed species (the truth file only lists the
#   reads): agree = multi (flagged), missed = none, wrong = one target named; every read
#   counts as mapped.
BEGIN { FS = OFS = "\t" }
FNR == NR { truth[$1] = $2; next }
{
    if (!($1 in truth)) { print "tabulate.awk: read " $1 " of " FILENAME " has no truth" > "/dev/stderr"; bad = 1; exit 1 }
    if ($1 in seen) { print "tabulate.awk: read " $1 " twice in " FILENAME > "/dev/stderr"; bad = 1; exit 1 }
    seen[$1] = 1; n++
    t = truth[$1]; c = $2
    assigned = (c != "none" && c != "multi")
    if (role == "chimera") { mapped++; if (c == "multi") agree++; else if (assigned) wrong++; else missed++; next }
    if (t == "unmapped") { unm++; if (assigned) ua++ } else mapped++
    if (role != "pos") { if (assigned) wrong++; next }
    if (t == "unmapped") next
    if (c == t) agree++
    else if (!assigned) { missed++; if (c == "multi") multi++ }
    else wrong++
}
END {
    if (bad) exit 1
    nt = 0; for (r in truth) nt++
    if (n != nt) { print "tabulate.awk: " FILENAME " has " n " reads, the truth " nt > "/dev/stderr"; exit 1 }
    if (role == "pos" || role == "chimera") { pa = pct(agree, mapped); pw = pct(wrong, mapped) }
    else { pa = "-"; pw = pct(wrong, n) }
    print tool, set, type, role, n, mapped + 0, agree + 0, missed + 0, multi + 0, wrong + 0,
          unm + 0, ua + 0, pa, pw, pct(ua, unm), sec
}
function pct(a, b) { return b > 0 ? sprintf("%.2f", 100 * a / b) : "-" }
