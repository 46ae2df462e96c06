// SBF_FILTER -- host removal with `sbf filter`: writes the reads (pairs) that are not assigned to
// the removed targets (ext.args '--remove human'; default: every target of the index), and sbf's
// summaries. nf-core module layout; see ../../../README.md (not run: Nextflow is not in Debian).
process SBF_FILTER {
    tag "$meta.id"
    label 'process_medium'
    label 'process_gpu'

    // sbf is not in Bioconda or BioContainers yet: no conda/container directive. Put sbf on PATH,
    // or give a container in the pipeline's config: withName: 'SBF_.*' { container = '...' }

    input:
    tuple val(meta), path(reads)
    path index

    output:
    tuple val(meta), path("*.clean.fastq.gz"), emit: reads
    tuple val(meta), path("*.summary.tsv")   , emit: tsv
    tuple val(meta), path("*.summary.json")  , emit: json
    tuple val(meta), path("*.sbf_filter.log"), emit: log
    path "versions.yml"                      , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args   = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    // Paired reads: two FASTQ files (names checked), or one SAM/BAM/CRAM whose mates are
    // adjacent (unaligned or collated). Single-end: one file.
    def output = meta.single_end ? "-o ${prefix}.clean.fastq.gz" : "-1 ${prefix}_1.clean.fastq.gz -2 ${prefix}_2.clean.fastq.gz"
    // The GPU when the task was given one (label process_gpu / accelerator); same results either way.
    def gpu    = task.accelerator ? '--gpu auto' : '--gpu none'
    """
    sbf filter \\
        -x $index \\
        -@ $task.cpus \\
        $gpu \\
        $args \\
        --no-progress \\
        --summary ${prefix}.summary.tsv \\
        --json ${prefix}.summary.json \\
        $output \\
        $reads \\
        2> ${prefix}.sbf_filter.log

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sbf: \$(sbf --version | head -n1 | sed 's/^sbf //')
    END_VERSIONS
    """

    stub:
    def args   = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def files  = meta.single_end ? "${prefix}.clean.fastq.gz" : "${prefix}_1.clean.fastq.gz ${prefix}_2.clean.fastq.gz"
    """
    echo "$args"
    for f in $files; do echo "" | gzip > \$f; done
    printf 'filter_id\\thits\\tmisses\\tshared\\trate_hit\\trate_miss\\trate_shared\\n' > ${prefix}.summary.tsv
    echo '{}' > ${prefix}.summary.json
    touch ${prefix}.sbf_filter.log

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sbf: \$(sbf --version | head -n1 | sed 's/^sbf //')
    END_VERSIONS
    """
}
