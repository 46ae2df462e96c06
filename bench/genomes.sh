# bench/genomes.sh -- sourced by the benchmark scripts: the real genomes they use, from Debian
# packages (vt-examples: human GRCh37 chr20; ragout-examples: E. coli K-12 MG1655).
# REF and OTHER replace them (the GPU machine has copies in .devdata/, no Debian packages).
ref=${REF:-/usr/share/doc/vt/examples/ref/20.fa.gz}
other=${OTHER:-/usr/share/doc/ragout/examples/E.Coli/references/MG1655-K12.fasta.gz}
for f in "$ref" "$other"; do
  [ -r "$f" ] || { echo "${0##*/}: $f missing: apt-get install vt-examples ragout-examples" >&2; exit 1; }
done
