#include "CCrypto.h"
#include "CLoad.h"
#include <openssl/crypto.h>
#include <stdint.h>
#include <stdio.h>

// The libcrypto functions tartil uses, found in libcrypto.so.3 by CLoad.
static struct {
    int (*init_crypto)(uint64_t, const OPENSSL_INIT_SETTINGS *);
    int (*sha256_init)(SHA256_CTX *);
    int (*sha256_update)(SHA256_CTX *, const void *, size_t);
    int (*sha256_final)(unsigned char *, SHA256_CTX *);
    const char *(*version)(int);
} crypto;

static const cload_function functions[] = {
    {"OPENSSL_init_crypto", (void **)&crypto.init_crypto},
    {"SHA256_Init", (void **)&crypto.sha256_init},
    {"SHA256_Update", (void **)&crypto.sha256_update},
    {"SHA256_Final", (void **)&crypto.sha256_final},
    {"OpenSSL_version", (void **)&crypto.version},
};

// By default OpenSSL frees its global state in an atexit handler, while tartil's other threads may still be
// running or ending (see TartilCache's SHA256.prepareLibrary).
static int prepare(char *failure, size_t capacity) {
    if (crypto.init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL) == 1) return 0;
    snprintf(failure, capacity, "OPENSSL_init_crypto failed");
    return -1;
}

static cload_library library =
    CLOAD_LIBRARY("libcrypto.so.3", "libcrypto", "", functions, sizeof functions / sizeof *functions, prepare);

const char *ccrypto_load(void) { return cload(&library); }

int ccrypto_sha256_init(SHA256_CTX *context) { return crypto.sha256_init(context); }
int ccrypto_sha256_update(SHA256_CTX *context, const void *bytes, size_t count) { return crypto.sha256_update(context, bytes, count); }
int ccrypto_sha256_final(unsigned char *digest, SHA256_CTX *context) { return crypto.sha256_final(digest, context); }
const char *ccrypto_version(void) { return crypto.version(OPENSSL_VERSION); }
