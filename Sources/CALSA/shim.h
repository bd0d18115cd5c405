#ifndef CALSA_SHIM_H
#define CALSA_SHIM_H
#include <alsa/asoundlib.h>

// ALSA's error handler is variadic, which Swift cannot define: this installs a handler that drops the
// library's own stderr chatter so tartil reports errors once, in its own words.
static void calsa_ignore_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}
static inline int calsa_silence_errors(void) {
    return snd_lib_error_set_handler(calsa_ignore_error);
}
#endif
