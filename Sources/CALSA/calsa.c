// The snd_* functions TartilAudio calls, each forwarding to libasound.so.2 (see CALSA.h).
#include "CLoad.h"
#include <assert.h>
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

// One pointer per function, of the function's own type (from asoundlib.h), found by CLoad.
static struct {
#define POINTER(name) __typeof__(name) *name;
    ALSA_FUNCTIONS(POINTER)
#undef POINTER
} alsa;

static const cload_function functions[] = {
#define FUNCTION(name) {#name, (void **)&alsa.name},
    ALSA_FUNCTIONS(FUNCTION)
#undef FUNCTION
};

static void ignore_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

// ALSA's own stderr chatter off: tartil reports errors once, in its own words.
static int prepare(char *failure, size_t capacity) {
    (void)failure, (void)capacity;
    alsa.snd_lib_error_set_handler(ignore_error);
    return 0;
}

static cload_library library =
    CLOAD_LIBRARY("libasound.so.2", "ALSA", "", functions, sizeof functions / sizeof *functions, prepare);

const char *calsa_load(void) { return cload(&library); }

// Every call below comes after a `calsa_load` that succeeded (ALSAOutput loads before it opens a device).
#define CALL(name, ...) (cload_or_stop(&library), alsa.name(__VA_ARGS__))

const char *snd_asoundlib_version(void) { cload_or_stop(&library); return alsa.snd_asoundlib_version(); }
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
