#!/usr/bin/env bash
# longreads.sh -- end-to-end tests of `sbf classify`, `sbf filter` and `sbf query` on long reads,
# CPU engine (--gpu none): reads of 400 kbp and 2 Mbp cut from the real genome slices of
# tests/data (repeated end to end, forward and reverse strand) and from a random genome made here
# (awk, fixed seed) and indexed as a target; FASTQ and FASTA, plain, gzip and BGZF; long runs of
# N; short and long reads mixed in one file; memory bounded by -K whatever the number of reads;
# paired long reads from two files. Every read is exact reference sequence (or random, or N), so
# the expected categories hold for any scoring threshold well below 100% of a read's k-mers.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/longreads.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1
C=(--gpu none)   # the CPU engine throughout
if command -v bgzip > /dev/null; then BGZIP='bgzip -c'; else BGZIP='gzip -c'; fi

# ---- genomes: one line of bases each ---------------------------------------------------------------
for g in human ecoli saureus lambda; do
  f=$data/${g}_slice.fa.gz; [ -e "$f" ] || f=$data/$g.fa.gz
  zcat "$f" | awk '!/^>/ { printf "%s", $0 } END { print "" }' > $g.seq
done
# rnd: a 1 Mbp random genome, indexed as a target; junk: 2.1 Mbp of random sequence in no target
awk 'BEGIN { srand(11); for (i = 0; i < 10000; ++i) { l = ""; for (j = 0; j < 100; ++j) l = l substr("ACGT", int(rand() * 4) + 1, 1); printf "%s", l } print "" }' > rnd.seq
awk 'BEGIN { srand(99); for (i = 0; i < 21000; ++i) { l = ""; for (j = 0; j < 100; ++j) l = l substr("ACGT", int(rand() * 4) + 1, 1); printf "%s", l } print "" }' > junk.seq
for g in human ecoli saureus rnd; do rev $g.seq | tr ACGT TGCA > ${g}_rc.seq; done   # reverse strands
(echo '>rnd_genome'; fold -w 80 rnd.seq) > rnd.fa
# --dust 0: every k-mer is in its target, so that exact reads hit all of theirs (below)
"$SBF" build -@ 2 --dust 0 -o idx.sbf human="$data/human_slice.fa.gz" ecoli="$data/ecoli_slice.fa.gz" \
  saureus="$data/saureus_slice.fa.gz" lambda="$data/lambda.fa.gz" rnd=rnd.fa 2> build.err ||
  { echo "Bail out! sbf build failed: $(cat build.err)"; exit 1; }
k=$("$SBF" info idx.sbf | sed -n 's/^parameters *k=\([0-9]*\) .*/\1/p')
[ -n "$k" ] || { echo "Bail out! no k in 'sbf info'"; exit 1; }

# mkreads [fa=1] SPEC: one record per line of SPEC, 'NAME PIECE... [+COMMENT]': PIECE is SRC:OFF:LEN
# (LEN bases from OFF of SRC.seq repeated end to end) or N:LEN; FASTQ with varied qualities, or
# FASTA on one line
mkreads() {
  awk "$@" 'function rep(s, n) { while (length(s) < n) s = s s; return s }
    function piece(p,   a, f, s) {
      split(p, a, ":")
      if (a[1] == "N") return substr(rep("N", a[2]), 1, a[2])
      if (!(a[1] in g)) { f = a[1] ".seq"; getline s < f; close(f); g[a[1]] = s }
      return substr(rep(g[a[1]], a[2] + a[3]), a[2] + 1, a[3])
    }
    BEGIN { Q = rep("56789:;<=>?@ABCDEFGHIJ", 4200000) }
    { s = ""; c = ""; for (i = 2; i <= NF; ++i) if ($i ~ /^\+/) { c = " " substr($i, 2); gsub(/~/, " ", c) } else s = s piece($i)
      if (fa) printf ">%s%s\n%s\n", $1, c, s; else printf "@%s%s\n%s\n+\n%s\n", $1, c, s, substr(Q, NR % 20 + 1, length(s)) }'
}
# truth_fq / truth_fa FILE: the expected category of each record (its name up to the first '_')
truth_fq() { awk 'NR % 4 == 1 { n = substr($1, 2); sub(/_.*/, "", n); print n }' "$1"; }
truth_fa() { awk '/^>/ { n = substr($1, 2); sub(/_.*/, "", n); print n }' "$1"; }
# category_fq / category_fa FILE: the sb tag of each record (FASTQ headers are every 4th line, FASTA's start with >)
category_fq() { awk 'NR % 4 == 1 { c = "untagged"; for (i = 2; i <= NF; ++i) if ($i ~ /^sb:Z:/) c = substr($i, 6); print c }' "$1"; }
category_fa() { awk '/^>/ { c = "untagged"; for (i = 2; i <= NF; ++i) if ($i ~ /^sb:Z:/) c = substr($i, 6); print c }' "$1"; }
# untag: the records without sbf's tags (byte for byte the input when nothing else changed)
untag() { sed -E 's/\t(sb:Z|ss:f):[^\t]*//g' "$1"; }
names_fq() { awk 'NR % 4 == 1 { print substr($1, 2) }' "$1"; }
names_fa() { awk '/^>/ { print substr($1, 2) }' "$1"; }
# same_lines NAME GOT WANTED: two lists equal, or the first differences
same_lines() {
  if cmp -s "$2" "$3"; then ok "$1"; else not_ok "$1" "$(diff "$3" "$2" | head -n 6 | tr '\n' ' ')"; fi
}
# peak_rss_kb CMD...: runs CMD (stdout to /dev/null), prints its peak RSS in KiB ('' on failure).
# Under AddressSanitizer (scripts/sanitize.sh) freed memory is quarantined, not reused: none here.
peak_rss_kb() {
  local ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
  export ASAN_OPTIONS
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f 'RSS %M' -o rss.txt "$@" > /dev/null 2> rss.err || { echo; return; }
    awk '$1 == "RSS" { print $2 }' rss.txt
  else   # --stats prints the peak RSS in MiB
    "$@" --stats > /dev/null 2> rss.err || { echo; return; }
    sed -n 's/.*peak RSS \([0-9.]*\) MiB.*/\1/p' rss.err | awk '{ printf "%d\n", $1 * 1024 }'
  fi
}
# rss_growth NAME SMALL_KB LARGE_KB LIMIT_MB: the larger input needs at most LIMIT_MB more
rss_growth() {
  if [ -z "$2" ] || [ -z "$3" ]; then not_ok "$1" "a run failed: $(head -c 300 rss.err)"; return; fi
  local grew=$((($3 - $2) / 1024))
  if [ "$grew" -le "$4" ]; then ok "$1 (peak RSS $(($2 / 1024)) -> $(($3 / 1024)) MiB)"
  else not_ok "$1" "peak RSS $(($2 / 1024)) MiB -> $(($3 / 1024)) MiB: grew by $grew MiB, more than $4"; fi
}

# ---- 1. reads of 400 kbp and 2 Mbp: FASTQ and FASTA, plain, gzip and BGZF ------------------------
cat > lr.spec << 'EOF'
human_400k human:0:400000 +runid=1a2b~ch=7
ecoli_400k_reverse ecoli_rc:777:400000
rnd_400k rnd:300000:400000
none_400k junk:0:400000
saureus_2M saureus:5:2000000 +len=2000000
human_2M_reverse human_rc:12345:2000000
lambda_2M lambda:100:2000000
rnd_2M_reverse rnd_rc:100:1000000 rnd:0:1000000
none_2M junk:50000:2000000
EOF
mkreads < lr.spec > lr.fq
mkreads -v fa=1 < lr.spec > lr.fa
gzip -c lr.fq > lr.fq.gz
awk '/^>/ { print; next } { while (length($0) > 70) { print substr($0, 1, 70); $0 = substr($0, 71) } print }' lr.fa |
  $BGZIP > lr_wrapped.fa.gz   # FASTA in lines of 70, BGZF
truth_fq lr.fq > lr.truth
for spec in "lr.fq:fq:lr.fq" "lr.fq.gz:fq:lr.fq" "lr.fa:fa:lr.fa" "lr_wrapped.fa.gz:fa:lr.fa"; do
  IFS=: read -r in fmt plain <<< "$spec"
  "$SBF" classify -x idx.sbf "${C[@]}" -K 1M -o out.$fmt "$in" 2> err
  check "classify $in (400 kbp and 2 Mbp reads): exit 0" test $? -eq 0
  category_$fmt out.$fmt > got
  same_lines "classify $in: every read in its genome's category (none for random)" got lr.truth
  untag out.$fmt > untagged
  same_lines "classify $in: every record written back whole, in order, apart from the tags" untagged "$plain"
done
# filter: removed and kept as asked, written unchanged and untagged
"$SBF" filter -x idx.sbf "${C[@]}" -K 1M --remove human -o kept.fq lr.fq 2> err
check "filter --remove human lr.fq: exit 0" test $? -eq 0
names_fq kept.fq > got; paste -d ' ' <(names_fq lr.fq) lr.truth | awk '$2 != "human" { print $1 }' > want
same_lines "filter --remove human: the human reads (400 kbp, 2 Mbp, reverse strand) removed, the others kept" got want
awk 'NR == FNR { keep[$1] = 1; next } FNR % 4 == 1 { w = substr($1, 2) in keep } w' want lr.fq > want.fq
same_lines "filter --remove human: the kept records unchanged and untagged" kept.fq want.fq
"$SBF" filter -x idx.sbf "${C[@]}" -K 1M --keep rnd,saureus -o kept.fa lr_wrapped.fa.gz 2> err
check "filter --keep rnd,saureus lr_wrapped.fa.gz: exit 0" test $? -eq 0
names_fa kept.fa > got; paste -d ' ' <(names_fq lr.fq) lr.truth | awk '$2 == "rnd" || $2 == "saureus" { print $1 }' > want
same_lines "filter --keep rnd,saureus (FASTA, BGZF): exactly the rnd and saureus reads" got want
awk 'NR == FNR { keep[$1] = 1; next } /^>/ { w = substr($1, 2) in keep } w' want lr.fa > want.fa
same_lines "filter --keep: the kept FASTA records unchanged" kept.fa want.fa
"$SBF" filter -x idx.sbf "${C[@]}" --remove human,ecoli,saureus,lambda,rnd --invert -o inv.fq lr.fq.gz 2> err
check "filter --invert (gzip input): exit 0" test $? -eq 0
names_fq inv.fq > got; paste -d ' ' <(names_fq lr.fq) lr.truth | awk '$2 != "none" { print $1 }' > want
same_lines "filter --invert: every read of a target, none of the random ones" got want

# ---- 2. long runs of N ------------------------------------------------------------------------------
cat > n.spec << 'EOF'
human_Nmiddle human:0:150000 N:100000 human:150000:150000
ecoli_Nends N:100000 ecoli:0:200000 N:100000
none_allN N:400000
rnd_Nmiddle_2M rnd:0:900000 N:200000 rnd:100000:900000
none_allN_2M N:2000000
lambda_Nends_2M N:1 lambda:0:1999998 N:1
none_N1 N:1
saureus_short_Nruns saureus:0:500 N:5000 saureus:600:500
EOF
mkreads < n.spec > n.fq
mkreads -v fa=1 < n.spec | gzip -c > n.fa.gz
truth_fq n.fq > n.truth
"$SBF" classify -x idx.sbf "${C[@]}" -K 1M -o nout.fq n.fq 2> err
check "classify reads with long N runs (middle, both ends, all N): exit 0" test $? -eq 0
category_fq nout.fq > got
same_lines "N runs: reads in their genome's category, all-N reads 'none'" got n.truth
untag nout.fq > untagged
same_lines "N runs: records written back whole (N kept)" untagged n.fq
"$SBF" classify -x idx.sbf "${C[@]}" -K 1M -o nout.fa n.fa.gz 2> err
check "N runs as gzip FASTA: exit 0" test $? -eq 0
category_fa nout.fa > got
same_lines "N runs as gzip FASTA: the same categories" got n.truth
"$SBF" query -x idx.sbf "${C[@]}" -o n.tsv n.fq 2> err
check "query reads with long N runs: exit 0" test $? -eq 0
# k-mers with N are skipped: a run of L bases holds L-k+1 k-mers; exact sequence hits all of them
awk -v k="$k" 'function km(l) { return l >= k ? l - k + 1 : 0 }
  BEGIN { print km(150000) * 2; print km(200000); print 0; print km(900000) * 2; print 0; print km(1999998); print 0; print km(500) * 2 }' > want
awk 'NR > 1 { print $2 }' n.tsv > got
same_lines "query: valid k-mers of each N-run read are its k-mers without N (k=$k)" got want
# exact sequence: every valid k-mer is in its genome, apart from the few (k-1 per junction) that
# span two copies of a genome repeated end to end; the rnd read lies within one copy: all of them
awk 'NR == 1 { for (i = 3; i <= NF; ++i) col[$i] = i; next }
     { t = $1; sub(/_.*/, "", t)
       if (t == "none") print ($2 == 0 ? "ok" : $1 " has " $2 " k-mers")
       else if (t == "rnd") print ($(col[t]) == $2 ? "ok" : $1 ": " $(col[t]) " hits of " $2)
       else print ($(col[t]) >= 0.99 * $2 && $2 > 0 ? "ok" : $1 ": " $(col[t]) " hits of " $2) }' n.tsv > got
yes ok | head -n "$(wc -l < n.truth)" > want
same_lines "query: the valid k-mers of the exact reads hit their genome, all-N reads have none" got want

# ---- 3. short (100 bp) and long reads mixed in one file ---------------------------------------------
# 400 short reads of exact sequence from the five targets and from junk, a long read every 30
awk 'BEGIN { split("human ecoli saureus lambda rnd junk", g, " ") }
     { long[++ln] = $0 }
     END { for (i = 0; i < 400; ++i) {
             s = g[i % 6 + 1]; t = (s == "junk") ? "none" : s
             print t "_short" i, s ":" (i * 7919 % 29000) ":100"
             if (i % 30 == 29 && ++l <= ln) print long[l] } }' lr.spec n.spec > mix.spec
mkreads < mix.spec > mix.fq
truth_fq mix.fq > mix.truth
n_mix=$(wc -l < mix.truth)
"$SBF" classify -x idx.sbf "${C[@]}" -K 1M -@ 2 -o mix_out.fq mix.fq 2> err
check "classify $n_mix short and long reads in one file (-K 1M -@ 2): exit 0" test $? -eq 0
untag mix_out.fq > untagged
same_lines "mixed: output order is input order, every record unchanged apart from the tags" untagged mix.fq
category_fq mix_out.fq > got
same_lines "mixed: every short and long read in its category" got mix.truth
"$SBF" classify -x idx.sbf "${C[@]}" -K 1 -o mix_k1.fq mix.fq 2> err
check "-K 1 (one read per batch): the same output as -K 1M" cmp -s mix_k1.fq mix_out.fq
"$SBF" classify -x idx.sbf "${C[@]}" -o mix_def.fq mix.fq 2> err
check "default -K (one batch): the same output as -K 1M" cmp -s mix_def.fq mix_out.fq
SBF_ENCODE=1 "$SBF" classify -x idx.sbf "${C[@]}" -K 1M -@ 2 -o mix_enc.fq.gz mix.fq 2> err &&
  "$SBF" classify -x idx.sbf "${C[@]}" -K 1M -@ 2 -o mix_wr.fq.gz mix.fq 2> err
check "records encoded by the workers (BGZF FASTQ): the same bytes as the writer's" \
  sh -c 'cmp -s mix_enc.fq.gz mix_wr.fq.gz && test "$(zcat mix_enc.fq.gz | md5sum)" = "$(md5sum < mix_out.fq)"'
"$SBF" filter -x idx.sbf "${C[@]}" -K 1M --remove human,lambda -o mix_kept.fq mix.fq 2> err
check "filter the mixed file: exit 0" test $? -eq 0
paste -d ' ' <(names_fq mix.fq) mix.truth | awk '$2 != "human" && $2 != "lambda" { print $1 }' > want
awk 'NR == FNR { keep[$1] = 1; next } FNR % 4 == 1 { w = substr($1, 2) in keep } w' want mix.fq > want.fq
same_lines "filter the mixed file: the others kept in input order, unchanged" mix_kept.fq want.fq
if command -v samtools > /dev/null; then
  "$SBF" classify -x idx.sbf "${C[@]}" -K 1M --no-PG -o mix.bam mix.fq 2> err &&
    "$SBF" classify -x idx.sbf "${C[@]}" -K 1M -O fastq mix.bam > mix_bam.fq 2> err
  check "mixed: FASTQ -> BAM -> FASTQ keeps every record and category" \
    test "$(category_fq mix_bam.fq | md5sum)" = "$(md5sum < mix.truth)" -a "$(samtools view -c mix.bam)" -eq "$n_mix"
else
  skip "mixed: FASTQ -> BAM -> FASTQ" "no samtools"
fi

# ---- 4. memory bounded by -K, not by the input --------------------------------------------------------
# 100 reads of 400 kbp (80 MB of FASTQ), and their first 10
awk 'BEGIN { for (i = 0; i < 100; ++i) print (i % 2 ? "rnd" : "none") "_m" i, (i % 2 ? "rnd" : "junk") ":" (i * 7919 % 600000) ":400000" }' |
  mkreads > many100.fq
head -n 40 many100.fq > many10.fq
r10=$(peak_rss_kb "$SBF" classify -x idx.sbf "${C[@]}" -K 1M many10.fq)
r100=$(peak_rss_kb "$SBF" classify -x idx.sbf "${C[@]}" -K 1M -o many_out.fq many100.fq)
rss_growth "-K 1M: 100 reads of 400 kbp need no more memory than 10" "$r10" "$r100" 24
category_fq many_out.fq > got; truth_fq many100.fq > want
same_lines "-K 1M: all 100 reads of 400 kbp written, in their categories" got want
# short and long reads mixed: a long read among each few hundred short ones, at varying places
for cycles in 10 100; do
  awk -v C=$cycles 'BEGIN { srand(5); for (c = 0; c < C; ++c) { m = 100 + int(rand() * 500)
      for (i = 0; i < m; ++i) print "human_c" c "s" i, "human:" ((c * 600 + i) * 7 % 29000) ":100"
      print "rnd_c" c "L", "rnd:" (c * 1000) ":400000" } }' | mkreads > cyc$cycles.fq
done
r10=$(peak_rss_kb "$SBF" classify -x idx.sbf "${C[@]}" -K 100K cyc10.fq)
r100=$(peak_rss_kb "$SBF" classify -x idx.sbf "${C[@]}" -K 100K -o cyc_out.fq cyc100.fq)
rss_growth "-K 100K, short and long reads mixed: 100 long reads need no more memory than 10" "$r10" "$r100" 24
category_fq cyc_out.fq > got; truth_fq cyc100.fq > want
same_lines "-K 100K, mixed: every read written, in its category" got want
if command -v samtools > /dev/null; then
  samtools import -0 cyc10.fq -o cyc10.bam 2> /dev/null && samtools import -0 cyc100.fq -o cyc100.bam 2> /dev/null
  r10=$(peak_rss_kb "$SBF" classify -x idx.sbf "${C[@]}" -K 100K cyc10.bam)
  r100=$(peak_rss_kb "$SBF" classify -x idx.sbf "${C[@]}" -K 100K cyc100.bam)
  rss_growth "-K 100K, BAM of short and long reads: 100 long reads need no more memory than 10" "$r10" "$r100" 24
else
  skip "BAM of short and long reads: memory" "no samtools"
fi
# a batch holds at least one read, however long
awk '/^@human_2M_reverse/ { n = 4 } n-- > 0' lr.fq > one2M.fq
"$SBF" classify -x idx.sbf "${C[@]}" -K 1M -o one2M_out.fq one2M.fq 2> err
check "-K 1M, a single 2 Mbp read: exit 0" test $? -eq 0
check "... tagged human, written back whole" \
  test "$(category_fq one2M_out.fq)" = human -a "$(untag one2M_out.fq | md5sum)" = "$(md5sum < one2M.fq)"

# ---- 5. paired long reads (two files) ------------------------------------------------------------------
cat > p1.spec << 'EOF'
human_p1/1 human:0:400000
ecoli_p2/1 ecoli:0:2000000
rnd_p3/1 rnd:0:400000
none_p4/1 junk:0:400000
human_p5/1 human:5:400000
none_p6/1 N:400000
saureus_p7/1 saureus:0:100
EOF
cat > p2.spec << 'EOF'
human_p1/2 human_rc:1000:400000
ecoli_p2/2 ecoli_rc:0:400000
rnd_p3/2 rnd_rc:200000:2000000
none_p4/2 junk:500000:400000
human_p5/2 N:400000
none_p6/2 N:2000000
saureus_p7/2 saureus_rc:0:2000000
EOF
mkreads < p1.spec > lp_1.fq; mkreads < p2.spec > lp_2.fq
truth_fq lp_1.fq > lp.truth
"$SBF" classify -x idx.sbf "${C[@]}" -K 1M -1 lp_out_1.fq -2 lp_out_2.fq lp_1.fq lp_2.fq 2> err
check "classify paired long reads from two files: exit 0" test $? -eq 0
category_fq lp_out_1.fq > got
same_lines "pairs: each pair in its genome's category (an all-N mate does not matter)" got lp.truth
category_fq lp_out_2.fq > got2
same_lines "pairs: mates share their category" got2 got
check "pairs: both mate files written back whole, in order, apart from the tags" \
  sh -c 'test "$(sed -E "s/\t(sb:Z|ss:f):[^\t]*//g" lp_out_1.fq | md5sum)" = "$(md5sum < lp_1.fq)" &&
         test "$(sed -E "s/\t(sb:Z|ss:f):[^\t]*//g" lp_out_2.fq | md5sum)" = "$(md5sum < lp_2.fq)"'
mkreads -v fa=1 < p1.spec | gzip -c > lp_1.fa.gz; mkreads -v fa=1 < p2.spec | gzip -c > lp_2.fa.gz
"$SBF" classify -x idx.sbf "${C[@]}" -K 1M -O fasta lp_1.fa.gz lp_2.fa.gz > lp_out.fa 2> err
check "paired gzip FASTA: exit 0" test $? -eq 0
category_fa lp_out.fa | awk 'NR % 2' > got
same_lines "paired gzip FASTA: the same categories" got lp.truth
"$SBF" filter -x idx.sbf "${C[@]}" -K 1M --remove human,ecoli -1 lpf_1.fq -2 lpf_2.fq lp_1.fq lp_2.fq 2> err
check "filter paired long reads: exit 0" test $? -eq 0
paste -d ' ' <(names_fq lp_1.fq) lp.truth | awk '$2 != "human" && $2 != "ecoli" { sub(/\/1$/, "", $1); print $1 }' > want
names_fq lpf_1.fq | sed 's,/1$,,' > got
names_fq lpf_2.fq | sed 's,/2$,,' > got2
same_lines "filter pairs: the human and ecoli pairs removed, the others kept" got want
same_lines "filter pairs: mate files in step" got2 want
# batches of pairs are bounded by bases too: many short pairs first, then long ones
for np in 2 30; do
  awk -v K=$np 'BEGIN { for (i = 0; i < 500; ++i) { print "human_s" i "/1", "human:" (i * 37) ":100" > "pp1.spec"; print "human_s" i "/2", "human_rc:" (i * 53) ":100" > "pp2.spec" }
    for (i = 0; i < K; ++i) { print "rnd_l" i "/1", "rnd:" (i * 1000) ":400000" > "pp1.spec"; print "rnd_l" i "/2", "rnd_rc:" (i * 3000) ":400000" > "pp2.spec" } }'
  mkreads < pp1.spec > pp${np}_1.fq; mkreads < pp2.spec > pp${np}_2.fq
done
r2=$(peak_rss_kb "$SBF" classify -x idx.sbf "${C[@]}" -K 100K pp2_1.fq pp2_2.fq)
r30=$(peak_rss_kb "$SBF" classify -x idx.sbf "${C[@]}" -K 100K -1 pp_out_1.fq -2 pp_out_2.fq pp30_1.fq pp30_2.fq)
rss_growth "-K 100K, mate files of 500 short pairs then long ones: 30 long pairs need no more memory than 2" "$r2" "$r30" 24
category_fq pp_out_2.fq > got; truth_fq pp30_1.fq > want
same_lines "... every pair written, in its category" got want
# mates of very different lengths (short mate 1, a long mate 2 now and then), small batches: one
# file's records read beyond the other's wait for the next batch, in order
awk 'BEGIN { for (i = 0; i < 300; ++i) { s = i % 3 ? "ecoli" : "saureus"
      print s "_a" i "/1", s ":" (i * 41) ":100" > "a1.spec"
      print s "_a" i "/2", s "_rc:" (i * 43) ":" (i % 20 == 7 ? 200000 : 100) > "a2.spec" } }'
mkreads < a1.spec > la_1.fq; mkreads < a2.spec > la_2.fq
"$SBF" classify -x idx.sbf "${C[@]}" -K 100K -1 la_out_1.fq -2 la_out_2.fq la_1.fq la_2.fq 2> err
check "mates of 100 bp and 200 kbp, -K 100K: exit 0" test $? -eq 0
check "... both mate files written back whole, in order, apart from the tags" \
  sh -c 'test "$(sed -E "s/\t(sb:Z|ss:f):[^\t]*//g" la_out_1.fq | md5sum)" = "$(md5sum < la_1.fq)" &&
         test "$(sed -E "s/\t(sb:Z|ss:f):[^\t]*//g" la_out_2.fq | md5sum)" = "$(md5sum < la_2.fq)"'
category_fq la_out_2.fq > got; truth_fq la_1.fq > want
same_lines "... every pair in its category" got want
# mate files that disagree are still caught after the first batch
head -n $((4 * 299)) la_2.fq > la_short_2.fq
"$SBF" classify -x idx.sbf "${C[@]}" -K 10K -o bad.fq la_1.fq la_short_2.fq 2> err
check "-K 10K, mate 2 file one read short: exit 1" test $? -eq 1
check "... the error says the mate files hold different numbers of reads, no output is left" \
  sh -c 'grep -q "la_short_2.fq ends after 299 reads but la_1.fq goes on" err && test ! -e bad.fq'
sed '1197s/.*/@not_the_mate/' la_2.fq > la_bad_2.fq   # the header of pair 300
"$SBF" classify -x idx.sbf "${C[@]}" -K 10K -o bad.fq la_1.fq la_bad_2.fq 2> err
check "-K 10K, mate names differ at pair 300: exit 1" test $? -eq 1
check "... the error names them" \
  grep -q "mate names differ at pair 300: 'ecoli_a299/1' in la_1.fq and 'not_the_mate' in la_bad_2.fq" err

# interleaved long pairs give the same categories
paste -d '\n' <(paste - - - - < lp_1.fq) <(paste - - - - < lp_2.fq) | tr '\t' '\n' > lp_inter.fq
"$SBF" classify -x idx.sbf "${C[@]}" -K 1M --interleaved -o lp_inter_out.fq lp_inter.fq 2> err
check "interleaved long pairs: exit 0" test $? -eq 0
category_fq lp_inter_out.fq | awk 'NR % 2' > got
same_lines "interleaved long pairs: the categories of the two-file run" got lp.truth

# ---- 6. chimeras and low complexity -------------------------------------------------------------------
# A read whose parts belong to two targets is multi (windows of 512 k-mer segments tell them apart),
# one with a part in no target keeps its target, and poly-G is masked (no valid k-mer: none).
awk 'BEGIN { s = ""; for (i = 0; i < 1000; ++i) s = s "G"; print s }' > polyg.seq
awk 'BEGIN { s = ""; for (i = 0; i < 1000; ++i) s = s "AC"; print s }' > acrep.seq
cat > chim.spec <<'SPEC'
multi_rnd_ecoli rnd:0:200000 ecoli:1000:20000
multi_human_rnd human:0:25000 rnd:500000:400000
rnd_junk_tail rnd:100000:50000 junk:0:10000
multi_short_chimera human:2000:3000 ecoli:5000:3000
none_polyg polyg:0:300
none_acrep acrep:0:400
none_junk_polyg junk:5000:200 polyg:0:150
rnd_polyg_tail rnd:7000:300 polyg:0:120
SPEC
mkreads < chim.spec > chim.fq
"$SBF" classify -x idx.sbf "${C[@]}" -K 1M --json chim.json -o chim_out.fq chim.fq 2> chim.err
check "chimeras and repeats: exit 0" test $? -eq 0
truth_fq chim.fq > want
category_fq chim_out.fq > got
same_lines "chimeras are multi, a part in no target keeps the target, repeats are masked" got want
chimeric=$(grep -c '^multi_' chim.spec)
check "... the JSON counts the $chimeric chimeras among the multi reads" \
  grep -q "\"name\": \"multi\", \"reads\": $chimeric, \"fraction\": [0-9.e-]*, \"chimeric\": $chimeric}" chim.json
check "... and so does the summary on stderr" grep -q "^  multi .*($chimeric with parts of different targets)$" chim.err
# the four repeat reads (970 bases), and whatever short tandem repeats the genome slices hold
masked=$(sed -n 's/.*"masked": {"reads": \([0-9]*\), "bases": \([0-9]*\)}.*/\1 \2/p' chim.json)
check "... the JSON counts the masked reads and bases ($masked)" \
  awk -v m="$masked" 'BEGIN { split(m, a, " "); exit !(a[1] >= 4 && a[2] >= 970) }'
check "... and the summary on stderr says the same" \
  grep -q "low complexity: ${masked% *} reads had ${masked#* } bases masked" chim.err
check "... poly-G and (AC)n alone have no valid k-mer" grep -q "(2 without a valid k-mer)" chim.err
"$SBF" classify -x idx.sbf "${C[@]}" -K 1M --mask-lowcomp 0 -o nomask.fq chim.fq 2> /dev/null
check "--mask-lowcomp 0: poly-G keeps its k-mers" test "$(grep -c 'none_polyg.*ss:f:' nomask.fq)" -eq 1
"$SBF" query -x idx.sbf "${C[@]}" chim.fq > chim.tsv 2> /dev/null
check "sbf query counts every k-mer of a repeat (raw, unmasked)" \
  awk -v k="$k" '$1 == "none_polyg" { exit !($2 == 300 - k + 1) }' chim.tsv

# ---- 7. relatives and noisy long reads -----------------------------------------------------------------
# A relative 1.5% away (rel: rnd with a substitution every ~67 bases) indexed beside rnd; reads with
# 12% substitutions, as PacBio CLR reads have, keep about 2% of their 31-mers. A read of rnd finds
# about 60% of those in rel too: it is rnd's (a margin counted in the read's k-mers tied them), a
# read of rel is rel's, and a read joining 10 kbp of rnd to 10 kbp of E. coli is multi and counted
# as chimeric; the reads of one organism are not.
# mutate RATE SEED: each base of each input line replaced by another with probability RATE
mutate() {
  awk -v p="$1" -v seed="$2" 'function mut(s,   out, i, j, n, b, c) {
      out = ""; i = 1; n = length(s)
      while (i <= n) {
        j = i + int(log(1 - rand()) / log(1 - p))
        if (j > n) { out = out substr(s, i); break }
        b = substr(s, j, 1); do c = substr("ACGT", int(rand() * 4) + 1, 1); while (c == b)
        out = out substr(s, i, j - i) c; i = j + 1
      }
      return out }
    BEGIN { srand(seed) } { print mut($0) }'
}
mutate 0.015 5 < rnd.seq > rel.seq
(echo '>rel_genome'; fold -w 80 rel.seq) > rel.fa
# first with the 31-mers alone (no long-read layer), then the default index (section 8)
"$SBF" build -@ 2 --long-layer none -o rel.sbf rnd=rnd.fa rel=rel.fa ecoli="$data/ecoli_slice.fa.gz" 2> build.err ||
  { echo "Bail out! sbf build of the relatives failed: $(cat build.err)"; exit 1; }
{ for i in 0 1 2 3 4 5 6 7 8 9; do echo "rnd_$i rnd:$((i * 90000)):20000"; echo "rel_$i rel:$((i * 90000 + 7)):20000"; done
  for i in 0 1 2 3 4; do echo "multi_join_$i rnd:$((i * 150000)):10000 ecoli:$((i * 5000)):10000"; done; } > rel.spec
mkreads < rel.spec | awk 'NR % 4 == 2' | mutate 0.12 17 > rel.noisy
mkreads < rel.spec | awk 'NR == FNR { s[NR] = $0; next } FNR % 4 == 2 { print s[FNR / 4 + 0.5]; next } { print }' rel.noisy - > rel.fq
"$SBF" classify -x rel.sbf "${C[@]}" --hits --json rel.json -o rel_out.fq rel.fq 2> rel.err
check "noisy long reads with a relative indexed: exit 0" test $? -eq 0
check "... 12% substitutions: the reads keep 1-4% of their k-mers" \
  awk 'NR % 4 == 1 && $1 ~ /^@rnd_/ { split($NF, h, ","); f = h[2] / 19970; if (f < 0.005 || f > 0.05) bad = 1 } END { exit bad }' rel_out.fq
truth_fq rel.fq > want
category_fq rel_out.fq > got
same_lines "... a read of one organism is its own, a read joining two is multi" got want
check "... the JSON counts the 5 joined reads as chimeric, and only them" \
  grep -q '"name": "multi", "reads": 5, "fraction": [0-9.e-]*, "chimeric": 5}' rel.json
check "... an index without a long-read layer says so" grep -q '"long_read_layer": null,' rel.json

# ---- 8. the long-read layer -----------------------------------------------------------------------------
# The default index holds every target again with 21-mers: the same noisy reads keep about 7% of
# their 21-mers (0.88^21) against 2% of their 31-mers, and are screened with them; 100 bp reads
# in the same file stay on the 31-mers, with the answers an index without the layer gives.
"$SBF" build -@ 2 -o rel21.sbf rnd=rnd.fa rel=rel.fa ecoli="$data/ecoli_slice.fa.gz" 2> build.err ||
  { echo "Bail out! sbf build of the layered index failed: $(cat build.err)"; exit 1; }
{ cat rel.fq; mkreads < rel.spec | awk 'NR % 4 == 1 { n = substr($1, 2) }
    NR % 4 == 2 { q = sprintf("%100s", ""); gsub(/ /, "I", q); printf "@short_%s\n%s\n+\n%s\n", n, substr($0, 5001, 100), q }'; } > mixed21.fq
"$SBF" classify -x rel21.sbf "${C[@]}" --hits --json rel21.json -o rel21_out.fq mixed21.fq 2> rel21.err
check "long-read layer: exit 0" test $? -eq 0
check "... 12% substitutions: the reads keep 3-12% of their 21-mers (19980 per read)" \
  awk 'NR % 4 == 1 && $1 ~ /^@rnd_/ { split($NF, h, ","); f = h[2] / 19980; if (f < 0.03 || f > 0.12) bad = 1; ++n } END { exit bad || n != 10 }' rel21_out.fq
awk 'NR % 4 == 1 && $1 !~ /^@short_/' rel21_out.fq | sed 's/\tsh:B.*//; s/\tss:f:[^\t]*//' > got21
awk 'NR % 4 == 1' rel_out.fq | sed 's/\tsh:B.*//; s/\tss:f:[^\t]*//' > want21
same_lines "... the same categories as with the 31-mers alone" got21 want21
check "... the JSON: 25 reads screened with the k=21 layer, the 5 joined reads chimeric (100 bp reads the relatives share are multi, not chimeric)" \
  sh -c "grep -q '\"long_read_layer\": {\"k\": 21, \"min_read_bases\": 1000, \"reads\": 25},' rel21.json &&
         grep -q '\"name\": \"multi\", \"reads\": [0-9]*, \"fraction\": [0-9.e-]*, \"chimeric\": 5}' rel21.json"
check "... stderr says how many reads the layer screened" grep -q '^  long reads: 25 reads of 1000+ bases screened with the k=21 layer$' rel21.err
"$SBF" classify -x rel.sbf "${C[@]}" --hits -o short31.fq <(grep -A3 '^@short_' mixed21.fq | grep -v '^--$') 2> /dev/null
check "... the 100 bp reads: the answers (hits) of the index without the layer" \
  cmp -s short31.fq <(grep -A3 '^@short_' rel21_out.fq | grep -v '^--$')

tap_end
