#include "CLoad.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static void load(cload_library *library) {
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(library->failure, sizeof library->failure, "cannot load %s: %s", library->what, dlerror());
        return;
    }
    for (size_t index = 0; index < library->count; index++) {
        const cload_function *function = &library->functions[index];
        if (!(*function->pointer = dlsym(handle, function->name))) {
            snprintf(library->failure, sizeof library->failure, "%s has no %s%s", library->soname, function->name, library->needed);
            return;
        }
    }
    if (library->prepare && library->prepare(library->failure, sizeof library->failure) != 0) return;
    __atomic_store_n(&library->loaded, 1, __ATOMIC_RELEASE);
}

const char *cload(cload_library *library) {
    if (!__atomic_load_n(&library->loaded, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&library->lock);
        if (!library->tried) {
            library->tried = 1;
            load(library);
        }
        pthread_mutex_unlock(&library->lock);
    }
    return __atomic_load_n(&library->loaded, __ATOMIC_ACQUIRE) ? NULL : library->failure;
}

void cload_or_stop(cload_library *library) {
    if (__builtin_expect(__atomic_load_n(&library->loaded, __ATOMIC_ACQUIRE), 1)) return;
    if (!cload(library)) return;
    fprintf(stderr, "tartil: %s\n", library->failure);
    abort();
}
