/* sbf_tmpfile.h -- outputs that are complete or absent: a temporary file beside the final path,
 * renamed over it once everything is written (the index writer, the command's outputs).
 *
 * Temporary files in flight are registered, so that a signal handler (the command's, not the
 * library's: the library installs none) can remove them with sbf_tmpfile_remove_all() before
 * the process dies: an interrupted run leaves neither a final file nor a temporary one. */
#ifndef SBF_TMPFILE_H
#define SBF_TMPFILE_H

/* Create "PATH.tmp.XXXXXX" in path's folder with the mode a plain create would give (mkstemp
 * makes 0600), and register it. Returns the open descriptor and the malloc'd name in *tmp_out,
 * or a negative status (message names path). */
int sbf_tmpfile_create(const char *path, char **tmp_out);
/* Register a temporary name created by other means (an index htslib writes); 0 or -1 when
 * the registry is full (the file is then only removed by the normal error paths). */
int sbf_tmpfile_track(const char *tmp);
/* rename(tmp, path), then forget tmp: 0, or -1 with errno (tmp is still registered). */
int sbf_tmpfile_commit(const char *tmp, const char *path);
/* unlink(tmp) and forget it. */
void sbf_tmpfile_discard(const char *tmp);
/* Unlink every registered temporary file. Async-signal-safe. */
void sbf_tmpfile_remove_all(void);

#endif
