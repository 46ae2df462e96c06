#!/usr/bin/env bash
# mask.sh -- sbf build --mask: a host target masked against another sequence no longer removes
# that sequence's reads and still removes its own; the index records the masks and the k-mers
# they left out (sbf info, text and JSON); --mask adds up, applies to one target with NAME= and
# to every target without; bad masks are refused with one line and no index; the masked index
# is the same bytes for any thread count, across the chunks the mask is queried in.
# TAP-like output (tests/tap.sh). Run by `make check` or by hand: tests/mask.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
cd "$work" || exit 1
C=(--gpu none)
# builds with --dust 0: the masks alone, so that their counts and lists are exact
# (tests/test_api.c checks the low-complexity k-mers the default leaves out beside them)
B=(--gpu none --dust 0)

# ---- data: a host whose assembly holds 2 kbp of phage lambda (as a vector or a prophage would),
# reads of the host outside it and reads of lambda over the vector and 2 kbp on each side ------------------------------------
zcat "$data/lambda.fa.gz" | awk '!/^>/ { s = s $0 } END { print s }' > lambda.seq
zcat "$data/human_slice.fa.gz" | awk '!/^>/ { s = s $0 } END { print s }' > human.seq
awk -v lam="$(cat lambda.seq)" '{ printf ">host_with_vector\n%s%s%s\n", substr($0, 1, 15000), substr(lam, 10001, 2000), substr($0, 15001) }' \
  human.seq > host.fa
awk '{ q = sprintf("%100s", ""); gsub(/ /, "I", q)
       for (i = 0; i < 280; ++i) printf "@human_%d\n%s\n+\n%s\n", i, substr($0, 1 + 103 * i, 100), q }' human.seq > reads.fq
awk '{ q = sprintf("%100s", ""); gsub(/ /, "I", q)
       for (i = 80; i < 140; ++i) printf "@lambda_%d\n%s\n+\n%s\n", i, substr($0, 1 + 100 * i, 100), q }' lambda.seq >> reads.fq
removed() { awk 'NR % 4 == 1' "$1" > kept.names; awk -v g="$2" 'NR % 4 == 1 && $1 ~ "^@" g "_"' reads.fq | grep -cvxFf kept.names; }

"$SBF" build "${B[@]}" -o plain.sbf host=host.fa ecoli="$data/ecoli_slice.fa.gz" 2> err
check "unmasked host: built" test $? -eq 0
"$SBF" build "${B[@]}" -o masked.sbf host=host.fa ecoli="$data/ecoli_slice.fa.gz" --mask host="$data/lambda.fa.gz" 2> err
check "masked host: built, nothing on stderr" sh -c "[ \$? -eq 0 ] && [ ! -s err ]"

# ---- what the index records -----------------------------------------------------------------------------
"$SBF" info --json masked.sbf | sed '/"long_read_layer"/,$d' > info.json   # the targets, not their layer
got=$(tr -d ' \n' < info.json | grep -o '"name":"host",[^}]*}' | sed 's/"bases".*"masks"/"masks"/')
want="\"name\":\"host\",\"sources\":[\"host.fa\"],\"masks\":[\"$data/lambda.fa.gz\"],\"masked_kmers\":1970}"
if [ "$got" = "$want" ]; then ok "info --json: the host's mask and its 1970 k-mers left out (the 2 kbp of lambda)"
else not_ok "info --json: the host's mask and its 1970 k-mers left out (the 2 kbp of lambda)" "got:  $got" "want: $want"; fi
check "info --json: the other target has no mask" grep -q '"name": "ecoli", .*, "masks": \[\], "masked_kmers": 0}' info.json
"$SBF" info masked.sbf > info.txt
check "info: a 'masked' section naming the host, its count and its mask" \
  grep -qx "host    1970 k-mers (6.1620%) left out, found in $data/lambda.fa.gz" info.txt
check "info: no masked section for an unmasked index" sh -c "! '$SBF' info plain.sbf | grep -q '^masked'"

# ---- screening: the phage's reads stay, the host's reads go -----------------------------------------
"$SBF" filter "${C[@]}" -x plain.sbf --remove host -o plain.fq reads.fq 2> /dev/null
"$SBF" filter "${C[@]}" -x masked.sbf --remove host -o masked.fq reads.fq 2> /dev/null
lp=$(removed plain.fq lambda); lm=$(removed masked.fq lambda); hp=$(removed plain.fq human); hm=$(removed masked.fq human)
if [ "$lp" -ge 15 ]; then ok "unmasked host: lambda reads of its vector are removed with it ($lp of 60)"
else not_ok "unmasked host: lambda reads of its vector are removed with it" "removed $lp of 60"; fi
if [ "$lm" -eq 0 ]; then ok "masked host: no lambda read removed"
else not_ok "masked host: no lambda read removed" "removed $lm of 60"; fi
if [ "$hp" -eq 280 ] && [ "$hm" -eq 280 ]; then ok "host reads: all 280 removed by both indexes"
else not_ok "host reads: all 280 removed by both indexes" "unmasked $hp, masked $hm"; fi

"$SBF" classify "${C[@]}" -x masked.sbf --json sum.json -o /dev/null reads.fq 2> sum.err
check "the run's JSON: the index's checksum, and the host's sources and mask" \
  sh -c "grep -q \"\\\"index_checksums\\\": \\[\\\"\$('$SBF' info --check masked.sbf | cut -d' ' -f1)\\\"\\]\" sum.json &&
         grep -q '{\"name\": \"host\", \"index\": 0, \"sources\": \[\"host.fa\"\], \"masks\": \[\"$data/lambda.fa.gz\"\], \"masked_kmers\": 1970}' sum.json"
check "... and stderr names the index and its checksum" \
  grep -qx "  index: masked.sbf, checksum $("$SBF" info --check masked.sbf | cut -d' ' -f1)" sum.err

# ---- --mask without NAME=, and twice ------------------------------------------------------------------
"$SBF" build "${B[@]}" -o every.sbf host=host.fa ecoli="$data/ecoli_slice.fa.gz" --mask "$data/lambda.fa.gz" \
  --mask "$data/saureus_slice.fa.gz" 2> err
check "--mask FILE twice: built" test $? -eq 0
masks_of() { tr -d ' \n' < "$1" | grep -o "\"name\":\"$2\",[^}]*}" | sed 's/.*"masks"://; s/,"masked_kmers".*//'; }
"$SBF" info --json every.sbf | sed '/"long_read_layer"/,$d' > every.json
want="[\"$data/lambda.fa.gz\",\"$data/saureus_slice.fa.gz\"]"
if [ "$(masks_of every.json host)" = "$want" ] && [ "$(masks_of every.json ecoli)" = "$want" ]; then
  ok "--mask without NAME= masks every target, both masks recorded in order"
else not_ok "--mask without NAME= masks every target, both masks recorded in order" "host: $(masks_of every.json host)" \
  "ecoli: $(masks_of every.json ecoli)"; fi

# ---- refusals: one line, exit 1, no index ---------------------------------------------------------------
refused() {
  local name=$1 line=$2 out=$3
  shift 3
  "$@" > stdout 2> stderr
  local got=$? first
  first=$(head -n 1 stderr)
  if [ "$got" -ne 1 ]; then not_ok "$name" "exit status $got, expected 1" "stderr: $first"
  elif [ "$first" != "$line" ]; then not_ok "$name" "stderr: '$first'" "wanted: '$line'"
  elif [ "$(wc -l < stderr)" -ne 1 ]; then not_ok "$name" "$(wc -l < stderr) lines on stderr"
  elif [ -e "$out" ]; then not_ok "$name" "$out was written"
  else ok "$name"; fi
}
refused "--mask for a target that does not exist" "sbf build: --mask mouse=$data/lambda.fa.gz: no target is named 'mouse'" \
  b.sbf "$SBF" build "${B[@]}" -o b.sbf host=host.fa --mask mouse="$data/lambda.fa.gz"
refused "--mask of a missing file" "sbf build: missing.fa: cannot open: No such file or directory" \
  b.sbf "$SBF" build "${B[@]}" -o b.sbf host=host.fa --mask missing.fa
printf '>short\nACGTACGTAC\n' > short.fa
refused "--mask with no k-mer" "sbf build: mask short.fa has no valid 31-mer (sequences shorter than k, or only N)" \
  b.sbf "$SBF" build "${B[@]}" -o b.sbf host=host.fa --mask short.fa
refused "--mask that covers a whole target" "sbf build: target 'lambda' has no 21-mer its masks do not hold (48482 left out)" \
  b.sbf "$SBF" build "${B[@]}" -o b.sbf lambda="$data/lambda.fa.gz" --mask "$data/lambda.fa.gz"

# ---- the same bytes for any thread count, across the chunks of a long target ------------------------
# 2.5 Mbp of random sequence (the mask is queried in chunks of 2^20 k-mers); the mask holds 1 kbp
# across the first chunk boundary and 1 kbp at the end
awk 'BEGIN { srand(7); printf ">random\n"; for (i = 0; i < 2500000; ++i) printf "%s", substr("ACGT", int(rand() * 4) + 1, 1); print "" }' > big.fa
awk 'NR == 2 { printf ">across\n%s\n>end\n%s\n", substr($0, 1048001, 1000), substr($0, 2499001) }' big.fa > bigmask.fa
"$SBF" build "${B[@]}" -@ 1 -o t1.sbf big.fa --mask bigmask.fa 2> /dev/null &&
  "$SBF" build "${B[@]}" -@ 3 -o t3.sbf big.fa --mask bigmask.fa 2> /dev/null
check "2.5 Mbp target: the same index with 1 and 3 threads" cmp -s t1.sbf t3.sbf
check "... 1940 k-mers left out (two stretches of 1 kbp)" grep -q '"masked_kmers": 1940}' <("$SBF" info --json t3.sbf | sed '/"long_read_layer"/,$d')

tap_end
