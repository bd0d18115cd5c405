#ifndef CSYSTEM_SHIM_H
#define CSYSTEM_SHIM_H
// Linux system calls and flags that Swift's Glibc module does not declare (they need _GNU_SOURCE).
#include <unistd.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>

// syncfs(2): writes back every dirty page of the file system holding `descriptor` and flushes the device once,
// which lets a batch of files be made durable with one flush instead of one fsync each.
static inline int csystem_syncfs(int descriptor) {
    return (int)syscall(SYS_syncfs, descriptor);
}

// Sets (`on` = 1) or clears O_DIRECT on an open file: writes then go from the caller's (aligned) buffer to the
// device without a copy in the page cache. Fails with EINVAL where the file system does not support it.
// One fcntl, not a read and a write of the flags: the descriptor must have been opened without the other flags
// F_SETFL changes (O_APPEND, O_ASYNC, O_NOATIME, O_NONBLOCK), which this clears. Every descriptor the cache
// writes through is (O_RDWR, with O_CREAT, O_EXCL, O_NOFOLLOW, O_CLOEXEC or O_TMPFILE, which F_SETFL ignores).
// (__O_DIRECT is glibc's name for the flag that it exports as O_DIRECT only under _GNU_SOURCE.)
static inline int csystem_set_direct(int descriptor, int on) {
    return fcntl(descriptor, F_SETFL, on ? __O_DIRECT : 0);
}

// Opens a new file in `directory` that has no name (O_TMPFILE): until `csystem_link_unnamed` names it, no
// other process can see it, and a crash leaves nothing behind. Fails (EOPNOTSUPP, EISDIR or EINVAL) where the
// file system does not support it.
static inline int csystem_open_unnamed(const char *directory, int mode) {
    return open(directory, O_RDWR | __O_TMPFILE | O_DIRECTORY | O_CLOEXEC, mode);
}

// Gives an unnamed file the name `path` (linkat(2) through /proc/self/fd, which needs no privilege). Fails with
// EEXIST when `path` exists.
static inline int csystem_link_unnamed(int descriptor, const char *path) {
    char source[40];
    snprintf(source, sizeof source, "/proc/self/fd/%d", descriptor);
    return linkat(AT_FDCWD, source, AT_FDCWD, path, AT_SYMLINK_FOLLOW);
}

// `csystem_open_unnamed` in the directory open at `directory` (a descriptor): nothing is looked up by name.
static inline int csystem_open_unnamed_at(int directory, int mode) {
    return openat(directory, ".", O_RDWR | __O_TMPFILE | O_CLOEXEC, mode);
}

// `csystem_link_unnamed` into the directory open at `directory`: `name` is created there, never followed (a
// symbolic link in the way makes it fail with EEXIST, like any other file).
static inline int csystem_link_unnamed_at(int descriptor, int directory, const char *name) {
    char source[40];
    snprintf(source, sizeof source, "/proc/self/fd/%d", descriptor);
    return linkat(AT_FDCWD, source, directory, name, AT_SYMLINK_FOLLOW);
}

// Sets an open file description lock (F_OFD_SETLK) of `type` (F_WRLCK, F_UNLCK) on the byte at `offset` of
// `descriptor`, without waiting.
static inline int csystem_set_byte_lock(int descriptor, long offset, short type) {
    struct flock lock = {0};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = offset;
    lock.l_len = 1;
#ifdef F_OFD_SETLK
    return fcntl(descriptor, F_OFD_SETLK, &lock);
#else
    return fcntl(descriptor, 37, &lock);  // F_OFD_SETLK, the same number on every Linux architecture
#endif
}

// Takes an exclusive lock on the byte at `offset` of `descriptor` without waiting (fails with EAGAIN or EACCES
// when someone else holds it). It is an open file description lock: it belongs to this open of the file, so two
// opens conflict even within one process, and closing the descriptor releases it.
static inline int csystem_try_lock_byte(int descriptor, long offset) {
    return csystem_set_byte_lock(descriptor, offset, F_WRLCK);
}

// Releases the lock `csystem_try_lock_byte` took on the byte at `offset` of `descriptor`.
static inline int csystem_unlock_byte(int descriptor, long offset) {
    return csystem_set_byte_lock(descriptor, offset, F_UNLCK);
}

// O_NOATIME (glibc's __O_NOATIME, exported under _GNU_SOURCE): a read that leaves the file's access time alone.
// open(2) refuses it with EPERM on a file the process neither owns nor has CAP_FOWNER for.
static const int csystem_o_noatime = __O_NOATIME;

// Sets the access time of `name` in the directory open at `directory` (a symbolic link itself, never followed)
// to `milliseconds` since 1970, leaving its modification time as it is.
static inline int csystem_set_access_time_at(int directory, const char *name, long long milliseconds) {
    struct timespec times[2] = {
        {.tv_sec = milliseconds / 1000, .tv_nsec = (milliseconds % 1000) * 1000000},
        {.tv_sec = 0, .tv_nsec = UTIME_OMIT},
    };
    return utimensat(directory, name, times, AT_SYMLINK_NOFOLLOW);
}

// The same, to the system's time now (UTIME_NOW): allowed to anyone who may write the file, where an explicit
// time needs its owner (a cache shared with another user).
static inline int csystem_set_access_time_now_at(int directory, const char *name) {
    struct timespec times[2] = {{.tv_sec = 0, .tv_nsec = UTIME_NOW}, {.tv_sec = 0, .tv_nsec = UTIME_OMIT}};
    return utimensat(directory, name, times, AT_SYMLINK_NOFOLLOW);
}
#endif
