#include "CEdit.h"
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>

// The libedit functions tartil uses, found in libedit.so.2 by `load`.
static struct {
    char *(*readline)(const char *);
    int (*add_history)(const char *);
    int (*read_history)(const char *);
    int (*write_history)(const char *);
    // Optional: the prompt then prints other threads' output above the line being typed.
    int (**getc_function)(FILE *);
    int (*forced_update_display)(void);
    // Optional: Tab completion.
    char **(**attempted_completion_function)(const char *, int, int);
    int *attempted_completion_over;
    char **(*completion_matches)(const char *, char *(*)(const char *, int));
    char **line_buffer;
} edit;

// Set by cedit_set_output_source; read by getc_with_output on the thread in readline.
static int output_descriptor = -1;
static int interrupt_descriptor = -1;
static void (*print_output)(void);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;

static void load(void) {
    void *library = dlopen("libedit.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    *(void **)&edit.readline = dlsym(library, "readline");
    *(void **)&edit.add_history = dlsym(library, "add_history");
    *(void **)&edit.read_history = dlsym(library, "read_history");
    *(void **)&edit.write_history = dlsym(library, "write_history");
    loaded = edit.readline && edit.add_history && edit.read_history && edit.write_history;
    *(void **)&edit.getc_function = dlsym(library, "rl_getc_function");
    *(void **)&edit.forced_update_display = dlsym(library, "rl_forced_update_display");
    *(void **)&edit.attempted_completion_function = dlsym(library, "rl_attempted_completion_function");
    *(void **)&edit.attempted_completion_over = dlsym(library, "rl_attempted_completion_over");
    *(void **)&edit.completion_matches = dlsym(library, "rl_completion_matches");
    *(void **)&edit.line_buffer = dlsym(library, "rl_line_buffer");
}

// libedit's rl_getc_function: waits for a key, output from other threads, or an interrupt. Output is printed
// here, on the thread in readline, between keys, where libedit's state is whole; then libedit redraws the
// prompt and the line below it. A character is decoded as libedit's own reader does (mbrtowc, one byte at a
// time, an invalid byte dropped). Returns -1 (readline then returns NULL) at the end of input or on an
// interrupt.
static int getc_with_output(FILE *stream) {
    (void)stream;
    char bytes[MB_LEN_MAX];
    size_t count = 0;
    for (;;) {
        struct pollfd descriptors[3] = {
            {.fd = 0, .events = POLLIN},
            {.fd = output_descriptor, .events = POLLIN},
            {.fd = interrupt_descriptor, .events = POLLIN},
        };
        if (poll(descriptors, 3, -1) < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        if (descriptors[2].revents) return -1;  // Ctrl-C: the caller sees the interrupt and starts a new line
        if (descriptors[1].revents) {
            char drain[64];
            while (read(output_descriptor, drain, sizeof drain) > 0) {}
            print_output();
            edit.forced_update_display();
            continue;
        }
        if (!descriptors[0].revents) continue;
        ssize_t got = read(0, bytes + count, 1);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -1;
        }
        if (got == 0) return -1;
        count++;
        wchar_t character;
        mbstate_t state;
        memset(&state, 0, sizeof state);
        size_t used = mbrtowc(&character, bytes, count, &state);
        if (used == (size_t)-2) {
            if (count >= MB_LEN_MAX) count = 0;  // too long to be a character: drop it
            continue;
        }
        if (used == (size_t)-1) {
            // Invalid: keep the last byte (it may start a character), drop the rest.
            if (count > 1) {
                bytes[0] = bytes[count - 1];
                count = 1;
            } else {
                count = 0;
            }
            continue;
        }
        return (int)character;
    }
}

int cedit_set_output_source(int output, int interrupt, void (*print)(void)) {
    if (cedit_load() != 0 || !edit.getc_function || !edit.forced_update_display || output < 0 || interrupt < 0) return -1;
    output_descriptor = output;
    interrupt_descriptor = interrupt;
    print_output = print;
    *edit.getc_function = getc_with_output;
    return 0;
}

// Set by cedit_set_completion; used on the thread in readline.
static char *(*complete_line)(const char *, int);
static char *candidates;      // the newline-separated answer of complete_line
static char *next_candidate;  // where generate_candidate reads next

// libedit's generator for rl_completion_matches: one candidate per call (libedit frees it), NULL after the last.
static char *generate_candidate(const char *text, int state) {
    (void)text;
    (void)state;
    if (!next_candidate || !*next_candidate) return NULL;
    char *end = strchr(next_candidate, '\n');
    size_t length = end ? (size_t)(end - next_candidate) : strlen(next_candidate);
    char *word = strndup(next_candidate, length);
    next_candidate += length + (end ? 1 : 0);
    return word;
}

static char **attempt_completion(const char *text, int start, int end) {
    (void)start;
    free(candidates);
    next_candidate = candidates = complete_line(*edit.line_buffer ? *edit.line_buffer : "", end);
    if (!candidates) {
        *edit.attempted_completion_over = 0;  // libedit completes file names
        return NULL;
    }
    *edit.attempted_completion_over = 1;
    return edit.completion_matches(text, generate_candidate);
}

int cedit_set_completion(char *(*complete)(const char *line, int cursor)) {
    if (cedit_load() != 0 || !edit.attempted_completion_function || !edit.attempted_completion_over ||
        !edit.completion_matches || !edit.line_buffer)
        return -1;
    complete_line = complete;
    *edit.attempted_completion_function = attempt_completion;
    return 0;
}

int cedit_load(void) {
    pthread_once(&once, load);
    return loaded ? 0 : -1;
}

char *cedit_readline(const char *prompt) { return edit.readline(prompt); }
void cedit_add_history(const char *line) { edit.add_history(line); }
int cedit_read_history(const char *file) { return edit.read_history(file); }
int cedit_write_history(const char *file) { return edit.write_history(file); }
