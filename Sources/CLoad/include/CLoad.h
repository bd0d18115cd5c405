#ifndef CLOAD_H
#define CLOAD_H
// Loading a C library on first use, for the C targets that reach one through dlopen instead of linking it
// (CCurl, CALSA, CSdBus, and CCrypto for the shared libcrypto libcurl uses): the library is opened once, from
// whichever thread asks first, every function the target uses is found in it, and the target's own preparation
// runs (a version check, a global init); the outcome, with the reason for a failure, is kept for every later ask.
// No Swift module imports this.
#include <pthread.h>
#include <stddef.h>

// One function to find: its name in the library, and where the pointer to it goes.
typedef struct {
    const char *name;
    void **pointer;
} cload_function;

// A library and its functions, with the outcome of loading it (the last four fields: leave them to
// CLOAD_LIBRARY's initial values).
typedef struct {
    const char *soname;                   // "libsqlite3.so.0"
    const char *what;                     // "SQLite": "cannot load SQLite: <dlerror>"
    const char *needed;                   // appended to "<soname> has no <function>" ("", or " (… or later is needed)")
    const cload_function *functions;
    size_t count;
    // Runs once every function is found: 0, or -1 with the reason written to `failure` (at most `capacity`).
    int (*prepare)(char *failure, size_t capacity);
    pthread_mutex_t lock;
    int tried;
    int loaded;                           // read and written atomically
    char failure[512];
} cload_library;

#define CLOAD_LIBRARY(soname, what, needed, functions, count, prepare) \
    { soname, what, needed, functions, count, prepare, PTHREAD_MUTEX_INITIALIZER, 0, 0, { 0 } }

// Loads `library` the first time (any thread; later calls wait for the first and return its outcome). Returns
// NULL when it is loaded, else why not (NUL-terminated text that stays as it is for the rest of the process).
const char *cload(cload_library *library);

// For a forwarding function: returns at once when `library` is loaded; loads it otherwise, and when that fails
// (a call before its target's load succeeded: a bug in tartil) stops the process with the reason, rather than
// jumping through a null pointer.
void cload_or_stop(cload_library *library);
#endif
