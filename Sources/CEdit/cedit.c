#include "CEdit.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

// The libedit functions tartil uses, found in libedit.so.2 by `load`.
static struct {
    char *(*readline)(const char *);
    int (*add_history)(const char *);
    int (*read_history)(const char *);
    int (*write_history)(const char *);
} edit;

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
}

int cedit_load(void) {
    pthread_once(&once, load);
    return loaded ? 0 : -1;
}

char *cedit_readline(const char *prompt) { return edit.readline(prompt); }
void cedit_add_history(const char *line) { edit.add_history(line); }
int cedit_read_history(const char *file) { return edit.read_history(file); }
int cedit_write_history(const char *file) { return edit.write_history(file); }
