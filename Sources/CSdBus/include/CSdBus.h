#ifndef CSDBUS_H
#define CSDBUS_H
// sd-bus (libsystemd) for TartilMPRIS, loaded on first use instead of linked, so tartil runs on a machine without
// libsystemd or without a session bus. sd-bus.h is used for its types and constants only; every sd-bus call is made
// here, through pointers found by dlsym, and the MPRIS objects (the vtables, the message building, which is
// variadic and so out of Swift's reach) are written in C. Swift sees a small, typed surface: open the bus and own
// the name, run one round of the loop, emit the two kinds of signal, close. Every function taking a
// `csdbus_player` must be called on the one thread that opened it.
#include <stddef.h>
#include <stdint.h>

// Loads libsystemd.so.0 (once, from any thread). Returns NULL, or why not (text that
// stays as it is).
const char *csdbus_load(void);

// What the player looks like to MPRIS at this moment, filled by the snapshot callback.
typedef enum {
    CSDBUS_TEXT_PLAYBACK_STATUS,  // Playing, Paused or Stopped
    CSDBUS_TEXT_LOOP_STATUS,      // None, Track or Playlist
    CSDBUS_TEXT_TRACK_ID,         // a D-Bus object path
    CSDBUS_TEXT_TITLE,
    CSDBUS_TEXT_ALBUM,
    CSDBUS_TEXT_ARTIST,
    CSDBUS_TEXT_COUNT
} csdbus_text;

typedef struct {
    char text[CSDBUS_TEXT_COUNT][256];
    int has_track;  // 0: Metadata holds only mpris:trackid (NoTrack)
    int32_t track_number;
    int64_t length_us;
    int64_t position_us;
    double rate, minimum_rate, maximum_rate, volume;
    int can_go_next, can_go_previous, can_play, can_pause, can_seek;
} csdbus_snapshot;

// Copies `value` (cut to fit, on a UTF-8 character boundary) into the snapshot.
void csdbus_snapshot_set_text(csdbus_snapshot *snapshot, csdbus_text field, const char *value);

// The MPRIS calls handed to Swift.
typedef enum {
    CSDBUS_CALL_PLAY,
    CSDBUS_CALL_PAUSE,
    CSDBUS_CALL_PLAY_PAUSE,
    CSDBUS_CALL_STOP,
    CSDBUS_CALL_NEXT,
    CSDBUS_CALL_PREVIOUS,
    CSDBUS_CALL_SEEK,          // microseconds: the offset
    CSDBUS_CALL_SET_POSITION,     // text (the track id) and microseconds
    CSDBUS_CALL_SET_RATE,         // number
    CSDBUS_CALL_SET_VOLUME,       // number
    CSDBUS_CALL_SET_LOOP_STATUS,  // text (None, Track, Playlist or what the client sent)
} csdbus_call;

typedef struct {
    void *context;
    // Carries out a call: 0, or -1 with the reason in `error` (the D-Bus caller gets it as an error reply).
    int (*call)(void *context, csdbus_call call, int64_t microseconds, double number, const char *text, char *error,
                size_t capacity);
    void (*snapshot)(void *context, csdbus_snapshot *snapshot);
} csdbus_callbacks;

typedef struct csdbus_player csdbus_player;

// Connects to the session bus ($DBUS_SESSION_BUS_ADDRESS), exports /org/mpris/MediaPlayer2 and owns
// org.mpris.MediaPlayer2.tartil, or org.mpris.MediaPlayer2.tartil.instance<pid> when that name is taken. Returns
// the player, or NULL with the reason in `error`. The name owned is copied to `name`.
csdbus_player *csdbus_open(csdbus_callbacks callbacks, char *name, size_t name_capacity, char *error, size_t capacity);

// Handles what the bus sent, then waits until the bus has more, `wake_fd` is readable (it is then drained) or
// `timeout_ms` pass. Returns 1 when woken, 0 otherwise, or a negative errno when the connection is lost.
int csdbus_run_once(csdbus_player *player, int wake_fd, int timeout_ms);

// org.freedesktop.DBus.Properties.PropertiesChanged for the Player interface, with the new values of `names`
// (NULL-terminated). Returns 0 or a negative errno.
int csdbus_emit_changed(csdbus_player *player, const char **names);

// org.mpris.MediaPlayer2.Player.Seeked(position).
int csdbus_emit_seeked(csdbus_player *player, int64_t position_us);

// Releases the name, flushes and closes the connection.
void csdbus_close(csdbus_player *player);

// An eventfd (non-blocking, close-on-exec) to wake csdbus_run_once from another thread by writing 8 bytes; -1 on
// failure.
int csdbus_eventfd(void);
#endif
