/* sbf_numfmt.h -- numbers as text for the tags of FASTA/FASTQ output, without printf: the
 * writer formats a score and the hit counts on every record, and printf's "%g" cost half the
 * time of formatting a tagged FASTQ record (bench/e2e.sh). */
#ifndef SBF_NUMFMT_H
#define SBF_NUMFMT_H

#include <stdint.h>

#define SBF_FMT_G_MAX 32   /* room sbf_fmt_g() may need */

/* Exactly what snprintf(out, SBF_FMT_G_MAX, "%g", v) writes (C locale), NUL-terminated;
 * returns its length. Values whose rounding to six digits is within a hair of a tie, and
 * those printed with an exponent, are handed to snprintf itself. */
int sbf_fmt_g(char *out, double v);
/* The decimal digits of v, NUL-terminated (at most 10 + 1 bytes); returns the length. */
int sbf_fmt_u32(char *out, uint32_t v);

#endif
