#ifndef CSYSTEM_SHIM_H
#define CSYSTEM_SHIM_H
// Linux system calls that Swift's Glibc module does not declare (they need _GNU_SOURCE).
#include <unistd.h>
#include <sys/syscall.h>

// syncfs(2): writes back every dirty page of the file system holding `descriptor` and flushes the device once,
// which lets a batch of files be made durable with one flush instead of one fsync each.
static inline int csystem_syncfs(int descriptor) {
    return (int)syscall(SYS_syncfs, descriptor);
}
#endif
