/* sbf_tmpfile.h -- outputs that are complete or absent: a temporary file beside the final path,
 * renamed over it once everything is written (the index writer and the command's -o outputs). */
#ifndef SBF_TMPFILE_H
#define SBF_TMPFILE_H

/* Create "PATH.tmp.XXXXXX" in path's folder with the mode a plain create would give (mkstemp
 * makes 0600). Returns the open descriptor and the malloc'd name in *tmp_out, or a negative
 * status (message names path). */
int sbf_tmpfile_create(const char *path, char **tmp_out);

#endif
