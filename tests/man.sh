#!/usr/bin/env bash
# man.sh -- the man pages (doc/man/*.1) and the bash completion (scripts/sbf-completion.bash)
# against the help of the command, which is the truth:
#   - every page renders without a warning (groff -man -ww; skipped without groff), has
#     EXIT STATUS and EXAMPLES sections, names the version `sbf --version` prints, and its
#     SEE ALSO pages exist; sbf.1 lists every command of `sbf --help`; every page is installed
#     (dist_man_MANS in Makefile.am);
#   - for each command: every option `sbf help CMD` prints (long and short) is an option of
#     sbf-CMD.1, the page documents no option the help lacks, and each default the help gives
#     in [brackets] is the page's "Default: ..." of that option;
#   - the completion offers the commands after `sbf `, every option of the help and no other
#     after `sbf CMD -`, the --gpu and -O values the help names, .sbf files after -x.
# TAP-like output as tests/cli.sh; run by `make check` or by hand: tests/man.sh
set -u
. "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/tap.sh"
top=$srcdir/..
mandir=$top/doc/man
completion=$top/scripts/sbf-completion.bash
# expect NAME LIST: ok when LIST (words) is empty, else not ok naming them
expect_none() { if [ -z "$2" ]; then ok "$1"; else not_ok "$1" $2; fi; }

version=$("$SBF" --version | sed -n '1s/^sbf //p')
commands=$("$SBF" --help | awk '/^Commands:/ { on = 1; next } on && NF == 0 { on = 0 } on && $1 != "help" { print $1 }')
if [ -z "$version" ] || [ -z "$commands" ]; then
  echo "Bail out! cannot read the version or the commands from $SBF"
  exit 1
fi
pages="sbf.1"
for c in $commands; do pages="$pages sbf-$c.1"; done

# ---- the pages as pages ----
missing=
for p in $pages; do [ -f "$mandir/$p" ] || missing="$missing $p"; done
expect_none "a page for sbf and for each command of sbf --help ($(echo $commands))" "$missing"

if command -v groff > /dev/null 2>&1; then
  for p in $pages; do
    [ -f "$mandir/$p" ] || continue
    if groff -man -ww -z -Tutf8 "$mandir/$p" > "$work/groff.out" 2>&1 && [ ! -s "$work/groff.out" ]; then
      ok "$p renders without warnings"
    else
      not_ok "$p renders without warnings" "$(head -5 "$work/groff.out")"
    fi
  done
else
  skip "the pages render without warnings" "groff not installed"
fi

bad=
for p in $pages; do
  f=$mandir/$p
  [ -f "$f" ] || continue
  name=$(echo "${p%.1}" | tr a-z A-Z)
  th=$(sed -n 's/^\.TH //p' "$f" | sed 's/\\-/-/g')
  case $th in "$name 1 "*"\"sbf $version\""*) ;; *) bad="$bad $p(.TH)" ;; esac
  grep -q '^\.SH "\{0,1\}EXIT STATUS' "$f" || bad="$bad $p(EXIT-STATUS)"
  grep -q '^\.SH "\{0,1\}EXAMPLES' "$f" || bad="$bad $p(EXAMPLES)"
  for ref in $(sed -n '/^\.SH "\{0,1\}SEE ALSO/,/^\.SH/p' "$f" | sed 's/\\-/-/g' | grep -o 'sbf[a-z-]*' | sort -u); do
    [ -f "$mandir/$ref.1" ] || bad="$bad $p(SEE-ALSO:$ref)"
  done
done
expect_none "each page: .TH NAME 1 ... \"sbf $version\", EXIT STATUS, EXAMPLES, existing SEE ALSO pages" "$bad"

bad=
for c in $commands; do
  sed -n '/^\.SH COMMANDS/,/^\.SH/p' "$mandir/sbf.1" | grep -qx "\.B $c" || bad="$bad $c"
  grep -q "^\.BR sbf\\\\-$c (1)" "$mandir/sbf.1" || bad="$bad sbf-$c(1)"
done
grep -q '^\.B SBF_HTSLIB_LOG' "$mandir/sbf.1" || bad="$bad SBF_HTSLIB_LOG"
grep -q '^\.BI 128+ N' "$mandir/sbf.1" || bad="$bad 128+N"
expect_none "sbf.1: every command and its page, SBF_HTSLIB_LOG, exit status 128+N" "$bad"

if [ -f "$top/Makefile.am" ]; then
  installed=$(sed -n '/^dist_man_MANS *=/,/[^\\]$/p' "$top/Makefile.am" | tr -d '\\' | tr ' \t' '\n\n' | grep '^doc/man/')
  bad=
  for f in "$mandir"/*.1; do
    echo "$installed" | grep -qx "doc/man/${f##*/}" || bad="$bad ${f##*/}"
  done
  expect_none "every page is in dist_man_MANS (installed by make install)" "$bad"
else
  skip "every page is in dist_man_MANS" "no Makefile.am"
fi

# ---- the options: help, page, completion ----
# help_entries CMD: one line per option entry of the help: "OPTIONS<tab>DEFAULT" (the first
# [bracketed] text of its description, or nothing)
help_entries() {
  "$SBF" help "$1" | awk '
    function take(s) { if (dflt == "" && match(s, /\[[^]]*\]/)) dflt = substr(s, RSTART + 1, RLENGTH - 2) }
    function flush() { if (opts != "") print opts "\t" dflt; opts = ""; dflt = "" }
    /^ +-/ && !/^          / {
      flush(); line = $0; sub(/^ +/, "", line)
      i = index(line, "  "); part = i ? substr(line, 1, i - 1) : line
      m = split(part, w, /[ ,]+/)
      for (j = 1; j <= m; j++) if (w[j] ~ /^-(-[A-Za-z][A-Za-z0-9_-]*(=.*)?|[A-Za-z0-9@])$/) {
        o = w[j]; sub(/=.*/, "", o); opts = opts (opts == "" ? "" : " ") o }
      take(i ? substr(line, i) : ""); next }
    /^          / { if (opts != "") take($0); next }
    { flush() }
    END { flush() }'
}
# page_entries PAGE: one line per .TP of the OPTIONS section: "OPTIONS<tab>PARAGRAPH" (as text)
page_entries() {
  sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g' -e 's/\\&//g' \
      -e 's/\\ / /g' -e 's/^\.\(B\|I\|BR\|RB\|IR\|RI\|BI\|IB\) //' -e '/^\.\(B\|I\|BR\|RB\|IR\|RI\|BI\|IB\)$/d' "$1" |
    awk '
      function flushp() { if (intag) { gsub(/"/, "", para); gsub(/[ \t]+/, " ", para); print opts "\t" para }; intag = 0 }
      /^\.SH/ { flushp(); inopt = $0 ~ /^\.SH "?OPTIONS/; next }
      !inopt { next }
      /^\.TP/ { flushp(); wanttag = 1; next }
      /^\.(SS|PP|P|LP|RS|RE|IP|HP)( |$)/ { flushp(); next }
      wanttag {
        wanttag = 0; intag = 1; para = ""; opts = ""; t = $0; gsub(/"/, "", t)
        m = split(t, w, /[ ,|]+/)
        for (j = 1; j <= m; j++) if (w[j] ~ /^-(-[A-Za-z][A-Za-z0-9_-]*(=.*)?|[A-Za-z0-9@])$/) {
          o = w[j]; sub(/=.*/, "", o); opts = opts (opts == "" ? "" : " ") o }
        next }
      intag { para = para " " $0 }
      END { flushp() }'
}
# complete_words WORD...: what the completion offers for the command line "WORD..." (the last
# word is the one being completed), one per line
complete_words() {
  ( # shellcheck source=/dev/null
    . "$completion" || exit 1
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMP_LINE="$*"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _sbf sbf "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[@]}" )
}
# missing_from LIST SET: the words of LIST that are not lines of SET
missing_from() { local w out=; for w in $1; do printf '%s\n' "$2" | grep -qxF -- "$w" || out="$out $w"; done; echo $out; }

if [ ! -f "$completion" ] || ! bash -n "$completion" 2> "$work/bash.err"; then
  not_ok "the completion script is valid bash" "$completion: $(cat "$work/bash.err" 2> /dev/null)"
fi
offered=$(complete_words sbf "")
expect_none "completion: the commands after 'sbf '" "$(missing_from "$commands help" "$offered")"
offered=$(complete_words sbf help "")
expect_none "completion: the commands after 'sbf help '" "$(missing_from "$commands" "$offered")"

for c in $commands; do
  page=$mandir/sbf-$c.1
  help_entries "$c" > "$work/help.$c"
  "$SBF" help "$c" > "$work/helptext.$c"
  help_long=$(grep -oE -- '--[A-Za-z][A-Za-z0-9_-]*' "$work/helptext.$c" | sort -u)
  help_all=$( (echo "$help_long"; cut -f1 "$work/help.$c" | tr ' ' '\n') | grep . | sort -u)
  if [ -z "$help_long" ]; then
    not_ok "sbf help $c lists options" "no long option in: $(head -1 "$work/helptext.$c")"
    continue
  fi
  [ -f "$page" ] || continue
  page_entries "$page" > "$work/page.$c"
  page_all=$(cut -f1 "$work/page.$c" | tr ' ' '\n' | grep . | sort -u)

  expect_none "sbf-$c.1 documents every option of sbf help $c (long and short)" \
    "$(missing_from "$help_all" "$page_all")"
  expect_none "sbf-$c.1 documents no option that sbf help $c lacks" "$(missing_from "$page_all" "$help_all")"

  # the defaults: [D] in the help is "Default: D" in the option's paragraph, and a page's
  # "Default:" has a default in the help
  bad=
  while IFS=$'\t' read -r opts dflt; do
    key=${opts##* }
    para=$(awk -F '\t' -v k="$key" '{ m = split($1, w, " "); for (j = 1; j <= m; j++) if (w[j] == k) { print $2; exit } }' "$work/page.$c")
    if [ -n "$dflt" ]; then
      case "$para " in
        *"Default: $dflt"[.\;,\ ]*) ;;
        *) bad="$bad $key[$dflt]" ;;
      esac
    else
      case $para in *"Default:"*) bad="$bad $key(page-only-default)" ;; esac
    fi
  done < "$work/help.$c"
  expect_none "sbf-$c.1: each option's default is the help's" "$bad"

  offered=$(complete_words sbf "$c" -)
  if [ -f "$completion" ]; then
    expect_none "completion: every option of sbf help $c after 'sbf $c -'" "$(missing_from "$help_all" "$offered")"
    expect_none "completion: no option that sbf help $c lacks" "$(missing_from "$offered" "$help_all")"
  fi
  if echo "$help_long" | grep -qx -- --gpu; then
    bad=
    for form in "--gpu:" "--gpu:=:" "--gpu="; do   # the last word, "" after a ':', is completed
      IFS=: read -r -a words <<< "$form"
      case $form in *:) words+=("") ;; esac
      got=$(complete_words sbf "$c" "${words[@]}" | sed 's/^--gpu=//' | sort | paste -sd, -)
      want=0,0\,1,all,auto,none   # build uses one device: no list, no all
      [ "$c" = build ] && want=0,auto,none
      [ "$got" = "$want" ] || bad="$bad words:$form->offered:$got"
    done
    expect_none "completion: sbf $c --gpu offers $want" "$bad"
  fi
  if echo "$help_long" | grep -qx -- --output-fmt; then
    fmts=$(awk '/--output-fmt/ { on = 1 } on { print } on && /\]/ { exit }' "$work/helptext.$c" |
             grep -oE '\b(sam|bam|cram|fastq|fasta)(\.gz)?\b' | sort -u | paste -sd, -)
    bad=
    for o in -O --output-fmt; do
      got=$(complete_words sbf "$c" "$o" "" | sort -u | paste -sd, -)
      [ "$got" = "$fmts" ] || bad="$bad $o->offered:$got"
    done
    expect_none "completion: sbf $c -O offers the formats of the help ($fmts)" "$bad"
  fi
done

# .sbf files after -x, every file after -o
mkdir -p "$work/files/sub" && : > "$work/files/a.sbf" && : > "$work/files/b.fq"
x=$(cd "$work/files" && complete_words sbf classify -x "" | sort | tr '\n' ' ')
o=$(cd "$work/files" && complete_words sbf classify -o "" | sort | tr '\n' ' ')
check_files() { case "$x" in *a.sbf*) ;; *) return 1 ;; esac; case "$x" in *b.fq*) return 1 ;; esac
  case "$x" in *sub*) ;; *) return 1 ;; esac; case "$o" in *a.sbf*b.fq*) ;; *) return 1 ;; esac; }
if check_files; then ok "completion: .sbf files and folders after -x, any file after -o"
else not_ok "completion: .sbf files and folders after -x, any file after -o" "-x: $x" "-o: $o"; fi

tap_end
