/* sbf_inflate.h -- a deflate decoder (RFC 1951) that can start anywhere in a stream.
 *
 * A plain gzip file is one deflate stream: each block may copy from the 32 KiB before it, so a
 * block in the middle of the file cannot be decoded to bytes without everything before it. It
 * can be decoded to *symbols* (pugz's and rapidgzip's idea): a byte, or a marker for "the byte
 * at offset w of the 32 KiB before this piece", resolved once the piece before is known. So
 * pieces of one file decode on several threads at once (sbf_pgzip.c), each found by searching
 * its part of the file for a block header that decodes.
 *
 * Symbols are uint16_t: 0-255 a byte, SBF_SYM_MARK | w (w < 32768) the window's byte w, where
 * the window is the 32 KiB before the piece (its byte 32767 the last). A piece's output begins
 * after `hist` symbols of history: 32768 markers when the window is unknown, the window's bytes
 * when it is known, none at the start of a gzip member. */
#ifndef SBF_INFLATE_H
#define SBF_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#define SBF_SYM_MARK 0x8000u
#define SBF_WINDOW_BYTES 32768u

/* The symbols of one piece: buf[0..hist) the history, buf[hist..hist+n) the output. */
typedef struct {
    uint16_t *buf;
    size_t hist, n, cap;   /* cap: symbols buf holds, history included */
} sbf_syms_t;

/* What sbf_inflate_blocks() ended on. */
enum {
    SBF_INFL_STOP = 0,   /* a block starts at or after `stop`: *pos is that block's start */
    SBF_INFL_FINAL,      /* the stream's last block ended: *pos just after it */
    SBF_INFL_BAD,        /* invalid data, or (text mode) a byte that is not text */
    SBF_INFL_TRUNC,      /* the data end inside a block */
    SBF_INFL_NOMEM
};

/* Decode whole blocks of data[0..size) from bit *pos (a block's first bit; bit i is bit i % 8
 * of byte i / 8), appending symbols to out (its history set by the caller), until a block
 * would start at a bit >= stop or the last block ends. text: every literal must be a text byte
 * (tab, line feed, carriage return, 32-126), for decoding where a block start is a guess.
 * out->buf grows as needed (realloc). */
int sbf_inflate_blocks(const uint8_t *data, size_t size, uint64_t *pos, uint64_t stop, sbf_syms_t *out, int text);

/* The first bit in [from, to) where a dynamic-Huffman block starts whose header is valid and
 * which decodes as text to its end with an unknown window (out receives its symbols after 32
 * KiB of markers, and, as sbf_inflate_blocks, the blocks after it until one would start at or
 * after stop). SBF_INFL_STOP or FINAL with *found its start, or SBF_INFL_BAD when no bit in
 * [from, to) starts one; NOMEM. */
int sbf_inflate_find(const uint8_t *data, size_t size, uint64_t from, uint64_t to, uint64_t stop, uint64_t *found,
                     uint64_t *end, sbf_syms_t *out);

/* out's history: `hist` symbols, the markers of an unknown window (window == NULL) or the
 * last hist bytes of a known one (window points at those hist bytes). 0 or SBF_INFL_NOMEM. */
int sbf_syms_reset(sbf_syms_t *out, size_t hist, const uint8_t *window);
void sbf_syms_free(sbf_syms_t *out);

#endif
