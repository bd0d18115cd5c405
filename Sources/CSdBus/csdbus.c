#include "CSdBus.h"
#include "CLoad.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

// The sd-bus functions tartil uses, found in libsystemd.so.0 by CLoad.
static struct {
    int (*open_user)(sd_bus **);
    sd_bus *(*flush_close_unref)(sd_bus *);
    int (*add_object_vtable)(sd_bus *, sd_bus_slot **, const char *, const char *, const sd_bus_vtable *, void *);
    int (*request_name)(sd_bus *, const char *, uint64_t);
    int (*get_fd)(sd_bus *);
    int (*get_events)(sd_bus *);
    int (*get_timeout)(sd_bus *, uint64_t *);
    int (*process)(sd_bus *, sd_bus_message **);
    int (*emit_properties_changed_strv)(sd_bus *, const char *, const char *, char **);
    int (*emit_signal)(sd_bus *, const char *, const char *, const char *, const char *, ...);
    int (*reply_method_return)(sd_bus_message *, const char *, ...);
    int (*message_read)(sd_bus_message *, const char *, ...);
    int (*message_append)(sd_bus_message *, const char *, ...);
    int (*message_open_container)(sd_bus_message *, char, const char *);
    int (*message_close_container)(sd_bus_message *);
    int (*error_set)(sd_bus_error *, const char *, const char *);
    const unsigned *vtable_format;
} bus;

static const cload_function functions[] = {
    {"sd_bus_open_user", (void **)&bus.open_user},
    {"sd_bus_flush_close_unref", (void **)&bus.flush_close_unref},
    {"sd_bus_add_object_vtable", (void **)&bus.add_object_vtable},
    {"sd_bus_request_name", (void **)&bus.request_name},
    {"sd_bus_get_fd", (void **)&bus.get_fd},
    {"sd_bus_get_events", (void **)&bus.get_events},
    {"sd_bus_get_timeout", (void **)&bus.get_timeout},
    {"sd_bus_process", (void **)&bus.process},
    {"sd_bus_emit_properties_changed_strv", (void **)&bus.emit_properties_changed_strv},
    {"sd_bus_emit_signal", (void **)&bus.emit_signal},
    {"sd_bus_reply_method_return", (void **)&bus.reply_method_return},
    {"sd_bus_message_read", (void **)&bus.message_read},
    {"sd_bus_message_append", (void **)&bus.message_append},
    {"sd_bus_message_open_container", (void **)&bus.message_open_container},
    {"sd_bus_message_close_container", (void **)&bus.message_close_container},
    {"sd_bus_error_set", (void **)&bus.error_set},
    {"sd_bus_object_vtable_format", (void **)&bus.vtable_format},
};

static cload_library library = CLOAD_LIBRARY(
    "libsystemd.so.0", "libsystemd", " (systemd 242 or later is needed)", functions, sizeof functions / sizeof *functions, NULL);

const char *csdbus_load(void) { return cload(&library); }

void csdbus_snapshot_set_text(csdbus_snapshot *snapshot, csdbus_text field, const char *value) {
    if (field < 0 || field >= CSDBUS_TEXT_COUNT) return;
    char *target = snapshot->text[field];
    size_t length = strlen(value);
    size_t room = sizeof snapshot->text[field] - 1;
    if (length > room) {
        length = room;
        while (length > 0 && ((unsigned char)value[length] & 0xC0) == 0x80) length--;  // not inside a character
    }
    memcpy(target, value, length);
    target[length] = 0;
}

struct csdbus_player {
    sd_bus *bus;
    csdbus_callbacks callbacks;
};

static const char *object_path = "/org/mpris/MediaPlayer2";
static const char *player_interface = "org.mpris.MediaPlayer2.Player";
static const char *no_track = "/org/mpris/MediaPlayer2/TrackList/NoTrack";

static void take_snapshot(csdbus_player *player, csdbus_snapshot *snapshot) {
    memset(snapshot, 0, sizeof *snapshot);
    player->callbacks.snapshot(player->callbacks.context, snapshot);
}

// MARK: - org.mpris.MediaPlayer2 (the root interface)

static int root_ignore(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)userdata, (void)error;
    return bus.reply_method_return(message, "");  // Raise and Quit: CanRaise and CanQuit are false
}

static int root_bool_false(sd_bus *b, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                           void *userdata, sd_bus_error *error) {
    (void)b, (void)path, (void)interface, (void)property, (void)userdata, (void)error;
    return bus.message_append(reply, "b", 0);
}

static int root_identity(sd_bus *b, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                         void *userdata, sd_bus_error *error) {
    (void)b, (void)path, (void)interface, (void)property, (void)userdata, (void)error;
    return bus.message_append(reply, "s", "tartil");
}

static int root_empty_list(sd_bus *b, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                           void *userdata, sd_bus_error *error) {
    (void)b, (void)path, (void)interface, (void)property, (void)userdata, (void)error;
    return bus.message_append(reply, "as", 0);
}

// SD_BUS_VTABLE_START without its reference to libsystemd's sd_bus_object_vtable_format, which only a linked
// program can name in a constant: csdbus_open points it at the loaded library's.
#define VTABLE_START                                                                                         \
    {                                                                                                        \
        .type = _SD_BUS_VTABLE_START, .flags = 0,                                                            \
        .x = {.start = {.element_size = sizeof(sd_bus_vtable), .features = _SD_BUS_VTABLE_PARAM_NAMES,      \
                        .vtable_format_reference = NULL}}                                                    \
    }

static sd_bus_vtable root_vtable[] = {
    VTABLE_START,
    SD_BUS_METHOD("Raise", "", "", root_ignore, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Quit", "", "", root_ignore, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_PROPERTY("CanQuit", "b", root_bool_false, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("CanRaise", "b", root_bool_false, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("HasTrackList", "b", root_bool_false, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Identity", "s", root_identity, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("SupportedUriSchemes", "as", root_empty_list, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("SupportedMimeTypes", "as", root_empty_list, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_VTABLE_END,
};

// MARK: - org.mpris.MediaPlayer2.Player

// Hands a call to Swift and replies: an empty return, or an error with Swift's reason.
static int call(sd_bus_message *message, csdbus_player *player, csdbus_call which, int64_t microseconds, double number,
                const char *text, sd_bus_error *error) {
    char reason[512] = "";
    if (player->callbacks.call(player->callbacks.context, which, microseconds, number, text, reason, sizeof reason) != 0) {
        return bus.error_set(error, "org.mpris.MediaPlayer2.tartil.Refused", reason);
    }
    return message ? bus.reply_method_return(message, "") : 0;
}

#define SIMPLE_METHOD(function, which)                                                         \
    static int function(sd_bus_message *message, void *userdata, sd_bus_error *error) {        \
        return call(message, userdata, which, 0, 0, NULL, error);                              \
    }
SIMPLE_METHOD(method_play, CSDBUS_CALL_PLAY)
SIMPLE_METHOD(method_pause, CSDBUS_CALL_PAUSE)
SIMPLE_METHOD(method_play_pause, CSDBUS_CALL_PLAY_PAUSE)
SIMPLE_METHOD(method_stop, CSDBUS_CALL_STOP)
SIMPLE_METHOD(method_next, CSDBUS_CALL_NEXT)
SIMPLE_METHOD(method_previous, CSDBUS_CALL_PREVIOUS)
#undef SIMPLE_METHOD

static int method_seek(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    int64_t offset = 0;
    int r = bus.message_read(message, "x", &offset);
    if (r < 0) return r;
    return call(message, userdata, CSDBUS_CALL_SEEK, offset, 0, NULL, error);
}

static int method_set_position(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    const char *track = NULL;
    int64_t position = 0;
    int r = bus.message_read(message, "ox", &track, &position);
    if (r < 0) return r;
    return call(message, userdata, CSDBUS_CALL_SET_POSITION, position, 0, track, error);
}

static int method_open_uri(sd_bus_message *message, void *userdata, sd_bus_error *error) {
    (void)message, (void)userdata;
    return bus.error_set(error, "org.freedesktop.DBus.Error.NotSupported",
                         "tartil plays Qur'an references, not URIs: start one with tartil play REF");
}

// One getter for every Player property: it reads a fresh snapshot and appends the property named.
static int player_property(sd_bus *b, const char *path, const char *interface, const char *property, sd_bus_message *reply,
                           void *userdata, sd_bus_error *error) {
    (void)b, (void)path, (void)interface, (void)error;
    csdbus_snapshot s;
    take_snapshot(userdata, &s);
    if (!strcmp(property, "PlaybackStatus")) return bus.message_append(reply, "s", s.text[CSDBUS_TEXT_PLAYBACK_STATUS]);
    if (!strcmp(property, "LoopStatus")) return bus.message_append(reply, "s", s.text[CSDBUS_TEXT_LOOP_STATUS]);
    if (!strcmp(property, "Rate")) return bus.message_append(reply, "d", s.rate);
    if (!strcmp(property, "MinimumRate")) return bus.message_append(reply, "d", s.minimum_rate);
    if (!strcmp(property, "MaximumRate")) return bus.message_append(reply, "d", s.maximum_rate);
    if (!strcmp(property, "Volume")) return bus.message_append(reply, "d", s.volume);
    if (!strcmp(property, "Position")) return bus.message_append(reply, "x", s.position_us);
    if (!strcmp(property, "CanGoNext")) return bus.message_append(reply, "b", s.can_go_next);
    if (!strcmp(property, "CanGoPrevious")) return bus.message_append(reply, "b", s.can_go_previous);
    if (!strcmp(property, "CanPlay")) return bus.message_append(reply, "b", s.can_play);
    if (!strcmp(property, "CanPause")) return bus.message_append(reply, "b", s.can_pause);
    if (!strcmp(property, "CanSeek")) return bus.message_append(reply, "b", s.can_seek);
    if (!strcmp(property, "CanControl")) return bus.message_append(reply, "b", 1);
    if (strcmp(property, "Metadata") != 0) return -ENOENT;
    // Metadata: a{sv}.
    int r = bus.message_open_container(reply, 'a', "{sv}");
    if (r < 0) return r;
#define ENTRY(key, signature, ...)                                                  \
    if ((r = bus.message_append(reply, "{sv}", key, signature, __VA_ARGS__)) < 0) return r;
    if (!s.has_track) {
        ENTRY("mpris:trackid", "o", no_track)
    } else {
        ENTRY("mpris:trackid", "o", s.text[CSDBUS_TEXT_TRACK_ID])
        ENTRY("mpris:length", "x", s.length_us)
        ENTRY("xesam:title", "s", s.text[CSDBUS_TEXT_TITLE])
        ENTRY("xesam:album", "s", s.text[CSDBUS_TEXT_ALBUM])
        ENTRY("xesam:artist", "as", 1, s.text[CSDBUS_TEXT_ARTIST])
        ENTRY("xesam:trackNumber", "i", s.track_number)
    }
#undef ENTRY
    return bus.message_close_container(reply);
}

static int set_number(sd_bus *b, const char *path, const char *interface, const char *property, sd_bus_message *value,
                      void *userdata, sd_bus_error *error) {
    (void)b, (void)path, (void)interface;
    double number = 0;
    int r = bus.message_read(value, "d", &number);
    if (r < 0) return r;
    return call(NULL, userdata, !strcmp(property, "Rate") ? CSDBUS_CALL_SET_RATE : CSDBUS_CALL_SET_VOLUME, 0, number, NULL,
                error);
}

static int set_loop_status(sd_bus *b, const char *path, const char *interface, const char *property, sd_bus_message *value,
                           void *userdata, sd_bus_error *error) {
    (void)b, (void)path, (void)interface, (void)property;
    const char *status = NULL;
    int r = bus.message_read(value, "s", &status);
    if (r < 0) return r;
    return call(NULL, userdata, CSDBUS_CALL_SET_LOOP_STATUS, 0, 0, status, error);
}

#define CHANGES SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE
static sd_bus_vtable player_vtable[] = {
    VTABLE_START,
    SD_BUS_METHOD("Play", "", "", method_play, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Pause", "", "", method_pause, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("PlayPause", "", "", method_play_pause, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Stop", "", "", method_stop, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Next", "", "", method_next, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Previous", "", "", method_previous, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("Seek", "x", SD_BUS_PARAM(Offset), "", , method_seek, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("SetPosition", "ox", SD_BUS_PARAM(TrackId) SD_BUS_PARAM(Position), "", , method_set_position,
                             SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_NAMES("OpenUri", "s", SD_BUS_PARAM(Uri), "", , method_open_uri, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_NAMES("Seeked", "x", SD_BUS_PARAM(Position), 0),
    SD_BUS_PROPERTY("PlaybackStatus", "s", player_property, 0, CHANGES),
    SD_BUS_WRITABLE_PROPERTY("LoopStatus", "s", player_property, set_loop_status, 0, CHANGES | SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_WRITABLE_PROPERTY("Rate", "d", player_property, set_number, 0, CHANGES | SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_PROPERTY("Metadata", "a{sv}", player_property, 0, CHANGES),
    SD_BUS_WRITABLE_PROPERTY("Volume", "d", player_property, set_number, 0, CHANGES | SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_PROPERTY("Position", "x", player_property, 0, 0),  // changes all the time: read, never signalled
    SD_BUS_PROPERTY("MinimumRate", "d", player_property, 0, CHANGES),
    SD_BUS_PROPERTY("MaximumRate", "d", player_property, 0, CHANGES),
    SD_BUS_PROPERTY("CanGoNext", "b", player_property, 0, CHANGES),
    SD_BUS_PROPERTY("CanGoPrevious", "b", player_property, 0, CHANGES),
    SD_BUS_PROPERTY("CanPlay", "b", player_property, 0, CHANGES),
    SD_BUS_PROPERTY("CanPause", "b", player_property, 0, CHANGES),
    SD_BUS_PROPERTY("CanSeek", "b", player_property, 0, CHANGES),
    SD_BUS_PROPERTY("CanControl", "b", player_property, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_VTABLE_END,
};
#undef CHANGES

// MARK: - The connection

static void set_error(char *error, size_t capacity, const char *what, int r) {
    if (capacity > 0) snprintf(error, capacity, "%s: %s", what, strerror(-r));
}

csdbus_player *csdbus_open(csdbus_callbacks callbacks, char *name, size_t name_capacity, char *error, size_t capacity) {
    const char *unloaded = csdbus_load();
    if (unloaded) {
        if (capacity > 0) snprintf(error, capacity, "%s", unloaded);
        return NULL;
    }
    root_vtable[0].x.start.vtable_format_reference = bus.vtable_format;
    player_vtable[0].x.start.vtable_format_reference = bus.vtable_format;
    csdbus_player *player = calloc(1, sizeof *player);
    if (!player) {
        set_error(error, capacity, "out of memory", -ENOMEM);
        return NULL;
    }
    player->callbacks = callbacks;
    int r = bus.open_user(&player->bus);
    if (r < 0) {
        set_error(error, capacity, "cannot connect to the session bus", r);
        free(player);
        return NULL;
    }
    const char *step = "cannot export the MPRIS objects";
    r = bus.add_object_vtable(player->bus, NULL, object_path, "org.mpris.MediaPlayer2", root_vtable, player);
    if (r >= 0) r = bus.add_object_vtable(player->bus, NULL, object_path, player_interface, player_vtable, player);
    if (r >= 0) {
        step = "cannot own a bus name";
        snprintf(name, name_capacity, "org.mpris.MediaPlayer2.tartil");
        r = bus.request_name(player->bus, name, 0);
        if (r == -EEXIST) {
            snprintf(name, name_capacity, "org.mpris.MediaPlayer2.tartil.instance%ld", (long)getpid());
            r = bus.request_name(player->bus, name, 0);
        }
    }
    if (r < 0) {
        set_error(error, capacity, step, r);
        bus.flush_close_unref(player->bus);
        free(player);
        return NULL;
    }
    return player;
}

int csdbus_run_once(csdbus_player *player, int wake_fd, int timeout_ms) {
    int r;
    do {
        r = bus.process(player->bus, NULL);
        if (r < 0) return r;
    } while (r > 0);
    int events = bus.get_events(player->bus);
    if (events < 0) return events;
    uint64_t until = 0;
    int wait_ms = timeout_ms;
    if (bus.get_timeout(player->bus, &until) > 0 && until != UINT64_MAX) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t now_us = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
        int bus_ms = until <= now_us ? 0 : (int)((until - now_us + 999) / 1000);
        if (bus_ms < wait_ms) wait_ms = bus_ms;
    }
    struct pollfd fds[2] = {{.fd = bus.get_fd(player->bus), .events = (short)events}, {.fd = wake_fd, .events = POLLIN}};
    r = poll(fds, 2, wait_ms);
    if (r < 0) return errno == EINTR ? 0 : -errno;
    if (fds[1].revents & POLLIN) {
        uint64_t count;
        while (read(wake_fd, &count, sizeof count) > 0) {}
        return 1;
    }
    return 0;
}

int csdbus_emit_changed(csdbus_player *player, const char **names) {
    return bus.emit_properties_changed_strv(player->bus, object_path, player_interface, (char **)names);
}

int csdbus_emit_seeked(csdbus_player *player, int64_t position_us) {
    return bus.emit_signal(player->bus, object_path, player_interface, "Seeked", "x", position_us);
}

void csdbus_close(csdbus_player *player) {
    if (!player) return;
    bus.flush_close_unref(player->bus);  // the name goes with the connection
    free(player);
}

int csdbus_eventfd(void) { return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); }
