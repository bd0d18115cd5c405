// The snd_* functions TartilAudio calls, each forwarding to libasound.so.2 (see CALSA.h).
#include <assert.h>
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>
// Hidden, as in CSQLite: the C library's headers come first (every one asoundlib.h includes), so that only ALSA's
// own declarations are.
#pragma GCC visibility push(hidden)
#include "CALSA.h"

#define ALSA_FUNCTIONS(X)                                                                                       \
    X(snd_asoundlib_version) X(snd_lib_error_set_handler) X(snd_pcm_close) X(snd_pcm_delay) X(snd_pcm_drain)      \
    X(snd_pcm_drop) X(snd_pcm_open) X(snd_pcm_prepare) X(snd_pcm_recover) X(snd_pcm_set_params) X(snd_pcm_writei) \
    X(snd_strerror)

// One pointer per function, of the function's own type (from asoundlib.h), found by `load`.
static struct {
#define POINTER(name) __typeof__(name) *name;
    ALSA_FUNCTIONS(POINTER)
#undef POINTER
} alsa;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;           // set by `load` (under pthread_once) when every function was found; read atomically
static char failure[512];    // why not, otherwise

static void ignore_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

static void load(void) {
    void *library = dlopen("libasound.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, sizeof failure, "cannot load ALSA: %s", dlerror());
        return;
    }
#define FIND(name)                                                                   \
    if (!(*(void **)&alsa.name = dlsym(library, #name))) {                           \
        snprintf(failure, sizeof failure, "libasound.so.2 has no %s", #name);        \
        return;                                                                      \
    }
    ALSA_FUNCTIONS(FIND)
#undef FIND
    alsa.snd_lib_error_set_handler(ignore_error);
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

int calsa_load(char *error, size_t capacity) {
    pthread_once(&once, load);
    if (loaded) return 0;
    if (error && capacity > 0) snprintf(error, capacity, "%s", failure);
    return -1;
}

// Every call below comes after a `calsa_load` that succeeded (ALSAOutput loads before it opens a device); one that
// does not is a bug in tartil, stopped here with the reason rather than a jump to null.
static inline void loaded_or_stop(void) {
    if (__builtin_expect(__atomic_load_n(&loaded, __ATOMIC_ACQUIRE), 1)) return;
    pthread_once(&once, load);
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) return;
    fprintf(stderr, "tartil: %s\n", failure);
    abort();
}
#define CALL(name, ...) (loaded_or_stop(), alsa.name(__VA_ARGS__))

const char *snd_asoundlib_version(void) { loaded_or_stop(); return alsa.snd_asoundlib_version(); }
int snd_pcm_close(snd_pcm_t *pcm) { return CALL(snd_pcm_close, pcm); }
int snd_pcm_delay(snd_pcm_t *pcm, snd_pcm_sframes_t *delay) { return CALL(snd_pcm_delay, pcm, delay); }
int snd_pcm_drain(snd_pcm_t *pcm) { return CALL(snd_pcm_drain, pcm); }
int snd_pcm_drop(snd_pcm_t *pcm) { return CALL(snd_pcm_drop, pcm); }
int snd_pcm_open(snd_pcm_t **pcm, const char *name, snd_pcm_stream_t stream, int mode) { return CALL(snd_pcm_open, pcm, name, stream, mode); }
int snd_pcm_prepare(snd_pcm_t *pcm) { return CALL(snd_pcm_prepare, pcm); }
int snd_pcm_recover(snd_pcm_t *pcm, int err, int silent) { return CALL(snd_pcm_recover, pcm, err, silent); }
int snd_pcm_set_params(
    snd_pcm_t *pcm, snd_pcm_format_t format, snd_pcm_access_t access, unsigned int channels, unsigned int rate, int resample,
    unsigned int latency) {
    return CALL(snd_pcm_set_params, pcm, format, access, channels, rate, resample, latency);
}
snd_pcm_sframes_t snd_pcm_writei(snd_pcm_t *pcm, const void *buffer, snd_pcm_uframes_t size) { return CALL(snd_pcm_writei, pcm, buffer, size); }
const char *snd_strerror(int code) { return CALL(snd_strerror, code); }
#pragma GCC visibility pop
