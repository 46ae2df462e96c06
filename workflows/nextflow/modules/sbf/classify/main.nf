// SBF_CLASSIFY -- contamination screening with `sbf classify`: every record, in input order, tagged
// with its category (sb:Z:<target|multi|none>) and best score (ss:f:) in a BAM, and sbf's
// summaries (BioBloom-style TSV, read by MultiQC's biobloomtools module; JSON).
// nf-core module layout; see ../../../README.md (not run: Nextflow is not in Debian).
process SBF_CLASSIFY {
    tag "$meta.id"
    label 'process_medium'
    label 'process_gpu'

    // sbf is not in Bioconda or BioContainers yet: no conda/container directive. Put sbf on PATH,
    // or give a container in the pipeline's config: withName: 'SBF_.*' { container = '...' }

    input:
    tuple val(meta), path(reads)
    path index

    output:
    tuple val(meta), path("*.sbf.bam")         , emit: bam
    tuple val(meta), path("*.summary.tsv")     , emit: tsv
    tuple val(meta), path("*.summary.json")    , emit: json
    tuple val(meta), path("*.sbf_classify.log"), emit: log
    path "versions.yml"                        , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args   = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    // Reads: one file (FASTQ/FASTA/SAM/BAM/CRAM; SAM-family mates paired by their flags when
    // adjacent) or two FASTQ mate files. FASTQ input gives unmapped BAM records (as samtools
    // import); SAM/BAM/CRAM records are kept as they are, tags added.
    def gpu    = task.accelerator ? '--gpu auto' : '--gpu none'
    """
    sbf classify \\
        -x $index \\
        -@ $task.cpus \\
        $gpu \\
        $args \\
        --no-progress \\
        --summary ${prefix}.summary.tsv \\
        --json ${prefix}.summary.json \\
        -o ${prefix}.sbf.bam \\
        $reads \\
        2> ${prefix}.sbf_classify.log

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sbf: \$(sbf --version | head -n1 | sed 's/^sbf //')
    END_VERSIONS
    """

    stub:
    def args   = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    echo "$args"
    touch ${prefix}.sbf.bam
    printf 'filter_id\\thits\\tmisses\\tshared\\trate_hit\\trate_miss\\trate_shared\\n' > ${prefix}.summary.tsv
    echo '{}' > ${prefix}.summary.json
    touch ${prefix}.sbf_classify.log

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        sbf: \$(sbf --version | head -n1 | sed 's/^sbf //')
    END_VERSIONS
    """
}
