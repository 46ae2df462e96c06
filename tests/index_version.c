/* index_version.c -- test helper: copy an .sbf index with another format version in its header
 * and a header checksum that is right for it, as a newer sbf would write it.
 * Usage: index_version IN.sbf OUT.sbf VERSION */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../filters/sbf_checksum.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: index_version IN.sbf OUT.sbf VERSION\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    static uint8_t buf[1 << 20];
    size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (!in || n < 128 || !feof(in)) {
        fprintf(stderr, "index_version: %s: cannot read (or larger than 1 MiB)\n", argv[1]);
        return 1;
    }
    fclose(in);
    uint32_t version = (uint32_t)strtoul(argv[3], NULL, 10);
    memcpy(buf + 8, &version, 4);   /* header: magic[8], version (little-endian), ..., checksum at 120 */
    uint64_t sum = sbf_xxh64(buf, 120, 0);
    memcpy(buf + 120, &sum, 8);
    FILE *out = fopen(argv[2], "wb");
    if (!out || fwrite(buf, 1, n, out) != n || fclose(out) != 0) {
        fprintf(stderr, "index_version: %s: cannot write\n", argv[2]);
        return 1;
    }
    return 0;
}
