# sbf-completion.bash -- bash completion of the `sbf` command: its subcommands, the options of
# each (long and short), the values of --gpu, -O/--output-fmt and --shard-bits, .sbf index files
# after -x/--index (and categorize's -f), files otherwise.
#
# `make install` puts it in $(datadir)/bash-completion/completions/sbf, where bash-completion
# finds it on first use of `sbf`; without bash-completion: `source scripts/sbf-completion.bash`.
# It needs nothing of bash-completion (it uses its _filedir when it is loaded).
#
# The option lists are those printed by `sbf help CMD`; tests/man.sh checks that every option
# of the help is offered here and that nothing else is. Change both together.

_sbf_commands='build info classify filter categorize query'

# _sbf_options CMD: sets _sbf_flags (options without a value) and _sbf_valued (options with one)
_sbf_options()
{
    local screen_flags='--interleaved --no-PG --write-index --rename --progress --no-progress --stats -h --help'
    local screen_valued='-T --reference -x --index -s --min-score --min-hits --min-fraction --margin --mask-lowcomp
        -O --output-fmt
        --summary --json --report -@ --threads -K --batch --gpu --gpu-mem-limit -o --output -1 --output1
        -2 --output2 --samples'
    case $1 in
    build)
        _sbf_flags='--progress -h --help'
        _sbf_valued='-o --output -k --kmer -m --minimizer -s --smer -H --hashes --shard-bits
            --bits-per-kmer --size --mask --dust --long-layer -@ --threads --gpu --preset' ;;
    info)
        _sbf_flags='--json --check -h --help'
        _sbf_valued='' ;;
    classify)
        _sbf_flags="$screen_flags --hits"
        _sbf_valued="$screen_valued --split --tags" ;;
    filter)
        _sbf_flags="$screen_flags --invert"
        _sbf_valued="$screen_valued --remove --keep" ;;
    categorize)
        _sbf_flags='-e --paired_mode -i --inclusive -b --best_hit --fq --fa -g --gz_output
            -v --version -h --help'
        _sbf_valued='-p --prefix -f --filter_files -s --score -t --threads --gpu' ;;
    query)
        _sbf_flags='-h --help'
        _sbf_valued='-x --index -o --output -@ --threads -K --batch --gpu' ;;
    *)
        _sbf_flags=''
        _sbf_valued='' ;;
    esac
}

# _sbf_words PREFIX WORDS...: COMPREPLY = the words that start with the word being completed
_sbf_words()
{
    local prefix=$1 w
    shift
    COMPREPLY=()
    for w in "$@"; do
        [[ $w == "$_sbf_cur"* ]] && COMPREPLY+=("$prefix$w")
    done
}

# _sbf_files [sbf]: file names (only *.sbf and folders with "sbf")
_sbf_files()
{
    if declare -F _filedir > /dev/null && [[ -z $_sbf_prefix ]]; then
        cur=$_sbf_cur
        _filedir ${1:+"$1"}
        return
    fi
    compopt -o filenames 2> /dev/null
    local IFS=$'\n' f
    COMPREPLY=()
    if [[ ${1-} == sbf ]]; then
        for f in $(compgen -d -- "$_sbf_cur"); do COMPREPLY+=("$_sbf_prefix$f"); done
        for f in $(compgen -f -X '!*.[sS][bB][fF]' -- "$_sbf_cur"); do
            [[ -d $f ]] || COMPREPLY+=("$_sbf_prefix$f")
        done
    else
        for f in $(compgen -f -- "$_sbf_cur"); do COMPREPLY+=("$_sbf_prefix$f"); done
    fi
}

_sbf()
{
    local cword=$COMP_CWORD cmd=${COMP_WORDS[1]} prev=''
    local _sbf_cur=${COMP_WORDS[COMP_CWORD]} _sbf_prefix='' _sbf_flags _sbf_valued
    local cur   # for bash-completion's _filedir
    COMPREPLY=()
    ((cword > 0)) && prev=${COMP_WORDS[cword - 1]}
    # "--gpu=au": COMP_WORDBREAKS holds '=' (bash's default), so the words are --gpu = au
    if [[ $_sbf_cur == = ]]; then
        _sbf_cur=''
    elif [[ $prev == = ]] && ((cword > 1)); then
        prev=${COMP_WORDS[cword - 2]}
    elif [[ $_sbf_cur == --*=* ]]; then   # '=' is not a word break: one word
        prev=${_sbf_cur%%=*}
        _sbf_prefix="$prev="
        _sbf_cur=${_sbf_cur#*=}
    fi

    if ((cword == 1)); then
        if [[ $_sbf_cur == -* ]]; then
            _sbf_words '' --help --version
        else
            _sbf_words '' $_sbf_commands help
        fi
        return 0
    fi
    if [[ $cmd == help ]]; then
        ((cword == 2)) && _sbf_words '' $_sbf_commands
        return 0
    fi
    _sbf_options "$cmd"
    [[ -n $_sbf_flags$_sbf_valued ]] || { _sbf_files; return 0; }

    # the value of an option
    local o takes=''
    for o in $_sbf_valued; do
        [[ $o == "$prev" ]] && takes=1
    done
    if [[ -n $takes ]]; then
        case $cmd:$prev in
        build:--gpu) _sbf_words "$_sbf_prefix" auto none 0 ;;
        *:--gpu) _sbf_words "$_sbf_prefix" auto none all 0 0,1 ;;
        *:-O | *:--output-fmt)
            _sbf_words "$_sbf_prefix" sam bam cram fastq fasta fastq.gz fasta.gz sam.gz ;;
        build:--shard-bits) _sbf_words "$_sbf_prefix" 256 512 ;;
        *:-x | *:--index | categorize:-f | categorize:--filter_files) _sbf_files sbf ;;
        *:-o | *:--output | *:-1 | *:-2 | *:-T | *:--reference | *:--summary | *:--json | \
            *:--report | *:--split | categorize:-p | categorize:--prefix) _sbf_files ;;
        *) ;;   # a number, a size, target names, tag names: nothing to offer
        esac
        return 0
    fi

    if [[ $_sbf_cur == -* && -z $_sbf_prefix ]]; then
        _sbf_words '' $_sbf_flags $_sbf_valued
        return 0
    fi
    [[ $cmd == info ]] && { _sbf_files sbf; return 0; }
    _sbf_files
    return 0
}

complete -F _sbf sbf
