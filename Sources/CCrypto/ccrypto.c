#include "CCrypto.h"
#include <dlfcn.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

// The libcrypto functions tartil uses, found in libcrypto.so.3 by `load`.
static struct {
    int (*init_crypto)(uint64_t, const OPENSSL_INIT_SETTINGS *);
    int (*sha256_init)(SHA256_CTX *);
    int (*sha256_update)(SHA256_CTX *, const void *, size_t);
    int (*sha256_final)(unsigned char *, SHA256_CTX *);
    const char *(*version)(int);
} crypto;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;           // set by `load` (under pthread_once) when every function was found and init ran
static char failure[512];    // why not, otherwise

static void load(void) {
    void *library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, sizeof failure, "cannot load libcrypto: %s", dlerror());
        return;
    }
#define FIND(field, name)                                                             \
    if (!(*(void **)&crypto.field = dlsym(library, name))) {                          \
        snprintf(failure, sizeof failure, "libcrypto.so.3 has no %s", name);          \
        return;                                                                       \
    }
    FIND(init_crypto, "OPENSSL_init_crypto")
    FIND(sha256_init, "SHA256_Init")
    FIND(sha256_update, "SHA256_Update")
    FIND(sha256_final, "SHA256_Final")
    FIND(version, "OpenSSL_version")
#undef FIND
    // By default OpenSSL frees its global state in an atexit handler, while tartil's other threads may still be
    // running or ending (see TartilCache's SHA256.prepareLibrary).
    if (crypto.init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL) != 1) {
        snprintf(failure, sizeof failure, "OPENSSL_init_crypto failed");
        return;
    }
    loaded = 1;
}

int ccrypto_load(char *error, size_t capacity) {
    pthread_once(&once, load);
    if (loaded) return 0;
    if (error && capacity > 0) snprintf(error, capacity, "%s", failure);
    return -1;
}

int ccrypto_sha256_init(SHA256_CTX *context) { return crypto.sha256_init(context); }
int ccrypto_sha256_update(SHA256_CTX *context, const void *bytes, size_t count) { return crypto.sha256_update(context, bytes, count); }
int ccrypto_sha256_final(unsigned char *digest, SHA256_CTX *context) { return crypto.sha256_final(digest, context); }
const char *ccrypto_version(void) { return crypto.version(OPENSSL_VERSION); }
