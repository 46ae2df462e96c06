/* sbf_verified.h -- the command opens an index verifying its filters once (doc/decisions.md
 * "Opening an index"). Reading every checksum of a 6.1 GB human index cost 1.3 s of every run;
 * the header and metadata checksums (a few kB) are still checked on every load. After a run has
 * verified a file's filters, a record in the user's cache folder names the file by device and
 * inode, with its size, modification and change times and its identity (sbf_index_checksum): a
 * later run that finds them all unchanged skips the filters' checksums. Copying, rewriting,
 * touching or renaming over the file changes its change time (which no user can set back), so
 * the first run after that verifies again. The library's sbf_index_load verifies every time;
 * only the command keeps records.
 */
#ifndef SBF_VERIFIED_H
#define SBF_VERIFIED_H

#include "sbf.h"

typedef enum { INDEX_VERIFIED_NOW, INDEX_VERIFIED_BEFORE } index_verified_t;

/* Load path for command cmd: every checksum when `always` is set or no record matches (then a
 * record is written), else header and metadata only. 0, or -1 after printing the error. *how
 * (when not NULL) says which happened. The records lie in $XDG_CACHE_HOME/sbf/verified, else
 * $HOME/.cache/sbf/verified; with neither variable set, every run verifies. */
int cli_index_open(const char *cmd, const char *path, int always, sbf_index_t **out, index_verified_t *how);

#endif
