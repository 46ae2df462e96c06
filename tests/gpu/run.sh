#!/usr/bin/env bash
# tests/gpu/run.sh -- on the GPU machine: GPU == CPU bit for bit (tests/test_gpu on random
# sequences and real genomes), compute-sanitizer (memcheck, racecheck, initcheck, synccheck) on
# a small run, then the benchmark (bench/sbf-gpu-bench). Built on the development machine and
# carried (see doc/gpu-notes.md):
#   make tests/test_gpu bench/sbf-gpu-bench
#   ../shared/device/pack-runtime.sh .devrt
#   mkdir -p .devdata && cp /usr/share/doc/{vt/examples/ref/20.fa.gz,ragout/examples/E.Coli/references/MG1655-K12.fasta.gz,bowtie2/examples/reference/lambda_virus.fa.gz} .devdata/
# then device run: bash tests/gpu/run.sh, carrying .devrt .devdata sbf tests/test_gpu tests/index_version
# bench/sbf-gpu-bench
#   optional: .devdata/real/<set>.fq.gz, reads of bench/real.sh's sets (classified on both engines)
# env: SKIP_SANITIZER=1, SKIP_BENCH=1 leave those parts out; with two GPUs, --gpu 0,1 is checked too.
set -uo pipefail
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=$PWD/.devrt/lib:${LD_LIBRARY_PATH:-} PATH=$PWD/.devrt/bin:$PATH
out=${OUT:-/tmp}
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
# every program must start here (a shared library missing on this machine used to print nothing):
# stop at once, loudly, naming what is missing
for prog in ./sbf ./tests/test_gpu; do
  if [ ! -x "$prog" ]; then echo "FATAL: $prog is missing: build it and carry it (see the header)"; exit 2; fi
  missing=$(ldd "$prog" 2>&1 | grep 'not found')
  if [ -n "$missing" ]; then echo "FATAL: $prog cannot start: $missing (carry .devrt, set LD_LIBRARY_PATH)"; exit 2; fi
done
./sbf --version > /dev/null 2>&1 || { echo "FATAL: ./sbf --version fails: $(./sbf --version 2>&1 | head -n 3)"; exit 2; }
./sbf --version | grep -q '^GPU 0:' || { echo "FATAL: sbf sees no GPU on the GPU machine: $(./sbf --version | tail -n 2)"; exit 2; }
status=0
echo "== --gpu none starts no CUDA driver (its start cost every CPU-engine run 0.1-0.3 s)"
tmpn=$(mktemp -d)
printf '>a\nACGTTGCAAGGCTTAACCGGTTAAGCTAGCTAGGATCCATGCATGCAAGTTCGA\n' > "$tmpn/a.fa"
printf '@r\nACGTTGCAAGGCTTAACCGGTTAAGCTAGCTAGGATCCATGC\n+\nIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIIII\n' > "$tmpn/r.fq"
for run in "build --gpu none -o $tmpn/n.sbf $tmpn/a.fa" "classify --gpu none -x $tmpn/n.sbf -o /dev/null $tmpn/r.fq" \
           "filter --gpu none -x $tmpn/n.sbf -o /dev/null $tmpn/r.fq" "query --gpu none -x $tmpn/n.sbf $tmpn/r.fq"; do
  loads=$(LD_DEBUG=libs ./sbf $run 2>&1 > /dev/null | grep -c 'libcuda')
  if [ "$loads" -eq 0 ]; then echo "ok: sbf ${run%% *} --gpu none"; else echo "FAILED: sbf ${run%% *} --gpu none looks for libcuda ($loads lines)"; status=1; fi
done
# GPUs hidden by CUDA_VISIBLE_DEVICES (empty: how Slurm and users hide them) are not expected: the
# CPU engine's own shape (one worker at -@ 4), not a GPU's workers answering on the CPU engine
CUDA_VISIBLE_DEVICES= ./sbf filter -@ 4 -x "$tmpn/n.sbf" -o /dev/null "$tmpn/r.fq" 2> "$tmpn/h.err"
if grep -q 'engine CPU, 4 threads, ' "$tmpn/h.err"; then echo "ok: CUDA_VISIBLE_DEVICES= runs the CPU engine's own shape"
else echo "FAILED: CUDA_VISIBLE_DEVICES= : $(head -n 1 "$tmpn/h.err")"; status=1; fi
./sbf filter -@ 4 -x "$tmpn/n.sbf" -o /dev/null "$tmpn/r.fq" 2> "$tmpn/h.err"
if grep -q 'engine GPU 0' "$tmpn/h.err"; then echo "ok: the GPU expected and used by default"
else echo "FAILED: the default run: $(head -n 1 "$tmpn/h.err")"; status=1; fi
rm -rf "$tmpn"
echo "== correctness: tests/test_gpu"
SBF_GPU_GENOMES=".devdata/lambda_virus.fa.gz .devdata/MG1655-K12.fasta.gz .devdata/20.fa.gz" ./tests/test_gpu 2>&1 |
  tee "$out/test_gpu.log" | grep -E "build |query |PASSED|FAILED|ERROR|LINE|device"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== the command line: tests/cli.sh with a GPU present, then chr20 through sbf on both engines"
SBF=$PWD/sbf srcdir=$PWD/tests tests/cli.sh > "$out/cli.log" 2>&1; rc=$?
grep -E '^not ok|passed, ' "$out/cli.log"; [ "$rc" -eq 0 ] || status=1
echo "== read screening: tests/screen.sh with a GPU present (its GPU cases compare both engines)"
SBF=$PWD/sbf srcdir=$PWD/tests tests/screen.sh > "$out/screen.log" 2>&1; rc=$?
grep -E '^not ok|GPU|^#' "$out/screen.log" | head -20; [ "$rc" -eq 0 ] || status=1
echo "== hostile inputs: tests/hostile.sh with a GPU present (--gpu-mem-limit falls back to the CPU)"
SBF=$PWD/sbf srcdir=$PWD/tests testbin=$PWD/tests tests/hostile.sh > "$out/hostile.log" 2>&1; rc=$?
grep -E '^not ok|gpu|GPU|^#' "$out/hostile.log" | head -20; [ "$rc" -eq 0 ] || status=1
./sbf --version | sed -n '4,5p'
tmp=$(mktemp -d)
./sbf build --gpu none -@ 8 -o "$tmp/cpu.sbf" .devdata/20.fa.gz .devdata/MG1655-K12.fasta.gz .devdata/lambda_virus.fa.gz &&
  ./sbf build --gpu 0 -o "$tmp/gpu.sbf" .devdata/20.fa.gz .devdata/MG1655-K12.fasta.gz .devdata/lambda_virus.fa.gz &&
  cmp "$tmp/cpu.sbf" "$tmp/gpu.sbf" && echo "sbf build: chr20 + E. coli + lambda index (and its long-read layer) identical on CPU and GPU" || status=1
./sbf build --gpu none -@ 8 -o "$tmp/cpu_m.sbf" human=.devdata/20.fa.gz ecoli=.devdata/MG1655-K12.fasta.gz --mask human=.devdata/MG1655-K12.fasta.gz --mask .devdata/lambda_virus.fa.gz &&
  ./sbf build --gpu 0 -o "$tmp/gpu_m.sbf" human=.devdata/20.fa.gz ecoli=.devdata/MG1655-K12.fasta.gz --mask human=.devdata/MG1655-K12.fasta.gz --mask .devdata/lambda_virus.fa.gz &&
  cmp "$tmp/cpu_m.sbf" "$tmp/gpu_m.sbf" && echo "sbf build --mask: masked chr20 + E. coli identical on CPU and GPU ($(./sbf info --json "$tmp/gpu_m.sbf" | grep -o '"masked_kmers": [0-9]*' | head -1))" || status=1
zcat .devdata/20.fa.gz > "$tmp/20.fa" && wgsim -N 200000 -1 150 -2 150 -e 0.002 -S 7 "$tmp/20.fa" "$tmp/r1.fq" "$tmp/r2.fq" > /dev/null 2>&1 &&
  ./sbf query --gpu none -@ 8 -x "$tmp/cpu.sbf" "$tmp/r1.fq" "$tmp/r2.fq" > "$tmp/cpu.tsv" &&
  ./sbf query --gpu 0 -x "$tmp/cpu.sbf" "$tmp/r1.fq" "$tmp/r2.fq" > "$tmp/gpu.tsv" 2> "$tmp/gq.err" &&
  [ ! -s "$tmp/gq.err" ] && [ -s "$tmp/gpu.tsv" ] && cmp "$tmp/cpu.tsv" "$tmp/gpu.tsv" && echo "sbf query: 200,000 wgsim pairs identical on CPU and GPU ($(wc -l < "$tmp/gpu.tsv") lines)" || status=1
# plain gzip mates of 8 MiB or more: a GPU run inflates them on its input pool (bam/sbf_pgzip.c)
gzip -1 -c "$tmp/r1.fq" > "$tmp/z1.fq.gz" && gzip -1 -c "$tmp/r2.fq" > "$tmp/z2.fq.gz" &&
  ./sbf filter --gpu none -@ 8 -x "$tmp/cpu_m.sbf" --remove human -1 "$tmp/c1.fq" -2 "$tmp/c2.fq" "$tmp/r1.fq" "$tmp/r2.fq" 2> "$tmp/c.err" &&
  ./sbf filter --gpu 0 -@ 8 --stats -x "$tmp/cpu_m.sbf" --remove human -1 "$tmp/z1.fq" -2 "$tmp/z2.fq" "$tmp/z1.fq.gz" "$tmp/z2.fq.gz" 2> "$tmp/z.err" &&
  grep -q "decompression: gzip (parallel)" "$tmp/z.err" && [ -s "$tmp/z1.fq" ] && cmp "$tmp/c1.fq" "$tmp/z1.fq" && cmp "$tmp/c2.fq" "$tmp/z2.fq" &&
  echo "sbf filter: gzip mates inflated on the GPU run's input pool, the CPU engine's records from the plain files" ||
  { echo "FAILED: gzip mates on the GPU: $(cat "$tmp/c.err" "$tmp/z.err" 2>&1 | grep -E 'input:|error|No such')"; status=1; }
samtools import -@ 8 -1 "$tmp/r1.fq" -2 "$tmp/r2.fq" -o "$tmp/in.bam" 2> /dev/null &&
  ./sbf classify --gpu none -@ 8 --hits -x "$tmp/cpu.sbf" -o "$tmp/cpu.bam" --json "$tmp/cpu.json" "$tmp/in.bam" 2> /dev/null &&
  ./sbf classify --gpu 0 -@ 8 --hits -x "$tmp/cpu.sbf" -o "$tmp/gpu.bam" --json "$tmp/gpu.json" --stats "$tmp/in.bam" 2> "$tmp/gpu.err" &&
  grep -q '"engine": "CPU' "$tmp/cpu.json" && grep -q '"engine": "GPU' "$tmp/gpu.json" &&
  [ "$(samtools view -c "$tmp/gpu.bam")" -eq 400000 ] &&
  cmp <(samtools view "$tmp/cpu.bam") <(samtools view "$tmp/gpu.bam") &&
  echo "sbf classify: 200,000 BAM pairs tagged identically on CPU and GPU (engines checked)" || status=1
grep -E 'engine|stages' "$tmp/gpu.err"; grep -h '"seconds"' "$tmp/cpu.json" "$tmp/gpu.json" | tr -d '\n'; echo " (CPU, GPU)"
# the long-read layer goes to the GPU when the first long read needs it: never for short reads
grep -q "long-read layer not uploaded (no long read)" "$tmp/gpu.err" &&
  echo "sbf classify: short reads only: the long-read layer stayed off the GPU" ||
  { echo "FAILED: short reads: no 'long-read layer not uploaded' in --stats: $(grep opening "$tmp/gpu.err")"; status=1; }
wgsim -N 20000 -1 3000 -2 3000 -e 0.01 -r 0 -R 0 -S 11 "$tmp/20.fa" "$tmp/l1.fq" /dev/null > /dev/null 2>&1 &&
  ./sbf classify --gpu none -@ 8 --hits -x "$tmp/cpu.sbf" -o "$tmp/lcpu.fq" --json "$tmp/lcpu.json" "$tmp/l1.fq" 2> /dev/null &&
  ./sbf classify --gpu 0 -@ 8 --hits -x "$tmp/cpu.sbf" -o "$tmp/lgpu.fq" --json "$tmp/lgpu.json" --stats "$tmp/l1.fq" 2> "$tmp/lgpu.err" &&
  grep -q '"engine": "CPU' "$tmp/lcpu.json" && grep -q '"engine": "GPU' "$tmp/lgpu.json" &&
  [ "$(awk 'NR % 4 == 1' "$tmp/lgpu.fq" | wc -l)" -eq 20000 ] && cmp "$tmp/lcpu.fq" "$tmp/lgpu.fq" &&
  grep -q "long-read layer uploaded in [0-9.]* when first needed" "$tmp/lgpu.err" &&
  echo "sbf classify: 20,000 reads of 3 kbp identical on CPU and GPU, the layer uploaded when first needed" ||
  { echo "FAILED: long reads on the GPU: $(grep -E 'opening|error' "$tmp/lgpu.err")"; status=1; }
grep -h opening "$tmp/lgpu.err"
rm -rf "$tmp"
if ls .devdata/real/*.fq.gz > /dev/null 2>&1; then
  echo "== real reads (bench/real.sh sets): sbf classify on the GPU and the CPU engine, every record compared"
  tmp=$(mktemp -d)
  ./sbf build -o "$tmp/real.sbf" human=.devdata/20.fa.gz ecoli=.devdata/MG1655-K12.fasta.gz \
    lambda=.devdata/lambda_virus.fa.gz 2> /dev/null || status=1
  for f in .devdata/real/*.fq.gz; do
    set_name=$(basename "$f" .fq.gz)
    ./sbf classify --gpu none -@ 8 --hits -x "$tmp/real.sbf" -o "$tmp/cpu.fq" --json "$tmp/cpu.json" "$f" 2> /dev/null &&
      ./sbf classify --gpu 0 --hits -x "$tmp/real.sbf" -o "$tmp/gpu.fq" --json "$tmp/gpu.json" "$f" 2> /dev/null &&
      grep -q '"engine": "GPU' "$tmp/gpu.json" && grep -q '"engine": "CPU' "$tmp/cpu.json" && [ -s "$tmp/gpu.fq" ] &&
      cmp "$tmp/cpu.fq" "$tmp/gpu.fq" &&
      echo "$set_name: $(awk 'NR % 4 == 1' "$tmp/gpu.fq" | wc -l) reads identical on both engines; $(grep -c 'sb:Z:multi' "$tmp/gpu.fq") multi, masked $(grep -o '"masked": {[^}]*}' "$tmp/gpu.json")" ||
      { echo "$set_name: GPU and CPU differ (or an engine did not run)"; status=1; }
  done
  rm -rf "$tmp"
fi
if [ "${SKIP_SANITIZER:-0}" != 1 ]; then
  for tool in memcheck racecheck initcheck synccheck; do
    SBF_GPU_QUICK=1 compute-sanitizer --tool "$tool" --error-exitcode 9 ./tests/test_gpu > "$out/sanitizer-$tool.log" 2>&1
    rc=$?
    printf '%-10s exit %d  %s\n' "$tool" "$rc" "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tail -n 1)"
    [ "$rc" -eq 0 ] || status=1
  done
fi
if [ "$(nvidia-smi -L | grep -c '^GPU')" -ge 2 ]; then
  echo "== two GPUs: sbf classify --gpu 0,1 against the CPU engine"
  tmp=$(mktemp -d)
  zcat .devdata/20.fa.gz > "$tmp/20.fa" && wgsim -N 300000 -1 150 -2 150 -e 0.002 -S 9 "$tmp/20.fa" "$tmp/r1.fq" "$tmp/r2.fq" > /dev/null 2>&1 &&
    ./sbf build -o "$tmp/idx.sbf" human="$tmp/20.fa" ecoli=.devdata/MG1655-K12.fasta.gz 2> /dev/null &&
    samtools import -@ 8 -1 "$tmp/r1.fq" -2 "$tmp/r2.fq" -o "$tmp/in.bam" 2> /dev/null &&
    ./sbf classify --gpu none -@ 8 --hits -x "$tmp/idx.sbf" -K 2M -o "$tmp/cpu.bam" "$tmp/in.bam" 2> /dev/null &&
    ./sbf classify --gpu 0,1 -@ 8 --hits -x "$tmp/idx.sbf" -K 2M --stats -o "$tmp/gpu2.bam" "$tmp/in.bam" 2> "$tmp/gpu2.err" &&
    cmp <(samtools view "$tmp/cpu.bam") <(samtools view "$tmp/gpu2.bam") &&
    ./sbf filter --gpu all -x "$tmp/idx.sbf" -K 1M --remove human -1 "$tmp/g1.fq" -2 "$tmp/g2.fq" "$tmp/r1.fq" "$tmp/r2.fq" 2> /dev/null &&
    ./sbf filter --gpu none -@ 8 -x "$tmp/idx.sbf" -K 1M --remove human -1 "$tmp/c1.fq" -2 "$tmp/c2.fq" "$tmp/r1.fq" "$tmp/r2.fq" 2> /dev/null &&
    cmp "$tmp/g1.fq" "$tmp/c1.fq" && cmp "$tmp/g2.fq" "$tmp/c2.fq" &&
    echo "two GPUs: 300,000 pairs tagged (BAM) and filtered (FASTQ) identically to the CPU engine" || status=1
  grep -h stages "$tmp/gpu2.err"
  rm -rf "$tmp"
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  echo "== benchmark (bench/gpu.sh)"
  bench/gpu.sh 2>&1 | tee "$out/bench.txt"
fi
exit $status
