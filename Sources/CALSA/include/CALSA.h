#ifndef CALSA_H
#define CALSA_H
// ALSA for TartilAudio, loaded on first use instead of linked: libasound binds some 800 symbols and applies 2,400
// relocations as it loads, at every start of tartil, and only a play to the sound card uses it (not a play to a
// WAV file or the silent output, nor any other command). asoundlib.h is used for its types and constants; the
// snd_* functions TartilAudio calls are defined in calsa.c, each calling libasound.so.2 through a pointer found by
// dlsym (hidden, as CSQLite's are). `calsa_load` must have succeeded before any of them is called.
#include <alsa/asoundlib.h>
#include <stddef.h>

// Loads libasound.so.2 (once, from any thread) and installs an error handler that drops the library's own stderr
// chatter, so tartil reports errors once, in its own words (ALSA's handler is variadic, which Swift cannot
// define). Returns NULL, or why not (text that
// stays as it is).
const char *calsa_load(void);
#endif
