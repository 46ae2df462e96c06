/* sbf_tmpfile.c -- the temporary file an output is written to before its rename, and the
 * registry of those in flight (see sbf_tmpfile.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sbf_error.h"
#include "sbf_tmpfile.h"

/* Fixed slots with their own copies of the names: the signal handler reads them without a
 * lock, so a name must never be freed or moved while its slot is marked used. */
#define MAX_TMPFILES 256
static char names[MAX_TMPFILES][PATH_MAX];
static volatile sig_atomic_t used[MAX_TMPFILES];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set by sbf_tmpfile_remove_all() before it reads the slots: a file registered by another
 * thread while it runs is removed by that thread (one of the two sees the other's store). */
static volatile sig_atomic_t removing;

int sbf_tmpfile_track(const char *tmp)
{
    if (strlen(tmp) >= PATH_MAX)
        return -1;
    pthread_mutex_lock(&registry_lock);
    int slot = -1;
    for (int i = 0; i < MAX_TMPFILES && slot < 0; ++i)
        if (!used[i])
            slot = i;
    if (slot >= 0) {
        strcpy(names[slot], tmp);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* the name is complete before it is used */
        used[slot] = 1;
    }
    pthread_mutex_unlock(&registry_lock);
    return slot >= 0 ? 0 : -1;
}

static void forget(const char *tmp)
{
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < MAX_TMPFILES; ++i)
        if (used[i] && !strcmp(names[i], tmp)) {
            used[i] = 0;
            break;
        }
    pthread_mutex_unlock(&registry_lock);
}

int sbf_tmpfile_commit(const char *tmp, const char *path)
{
    if (rename(tmp, path) != 0)
        return -1;
    forget(tmp);
    return 0;
}

void sbf_tmpfile_discard(const char *tmp)
{
    int saved = errno;
    unlink(tmp);
    forget(tmp);
    errno = saved;
}

void sbf_tmpfile_remove_all(void)
{
    removing = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 0; i < MAX_TMPFILES; ++i)
        if (used[i])
            unlink(names[i]);
}

int sbf_tmpfile_create(const char *path, char **tmp_out)
{
    *tmp_out = NULL;
    size_t n = strlen(path) + 16;
    char *tmp = malloc(n);
    if (!tmp)
        return sbf_error(SBF_E_NOMEM, "out of memory");
    snprintf(tmp, n, "%s.tmp.XXXXXX", path);
    /* No signal between the file's creation and its registration: a handler running there
     * (Ctrl-C just as an output opens) would leave the file behind. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int fd = mkstemp(tmp);
    int saved = errno;
    if (fd >= 0) {
        sbf_tmpfile_track(tmp);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (removing)   /* the process is dying of a signal handled on another thread */
            unlink(tmp);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        int rc = sbf_error_errno(SBF_E_IO, saved, "%s: cannot create a temporary file", path);
        free(tmp);
        return rc;
    }
    /* umask can only be read by setting it: set it straight back */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int rc = sbf_error_errno(SBF_E_IO, errno, "%s: chmod failed", tmp);
        close(fd);
        sbf_tmpfile_discard(tmp);
        free(tmp);
        return rc;
    }
    *tmp_out = tmp;
    return fd;
}
