#include "CCrypto.h"
#include "CLoad.h"
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <stdint.h>
#include <stdio.h>

// SHA-256: libcrypto.a's own functions, linked.
int ccrypto_sha256_init(SHA256_CTX *context) { return SHA256_Init(context); }
int ccrypto_sha256_update(SHA256_CTX *context, const void *bytes, size_t count) { return SHA256_Update(context, bytes, count); }
int ccrypto_sha256_final(unsigned char *digest, SHA256_CTX *context) { return SHA256_Final(digest, context); }
// The headers' text, not OpenSSL_version(): that one would link in most of libcrypto (cversion.o needs
// OPENSSL_info, which needs BIO_snprintf, which needs the error queue and OPENSSL_init_crypto, and so on: 2.7 MB
// and 16,600 relocations at every start), where the SHA-256 objects are about 20 KB.
const char *ccrypto_version(void) { return OPENSSL_VERSION_TEXT; }

// The shared libcrypto.so.3, for libcurl: found by CLoad, its one function by name.
static struct {
    int (*init_crypto)(uint64_t, const OPENSSL_INIT_SETTINGS *);
} shared;

static const cload_function functions[] = {
    {"OPENSSL_init_crypto", (void **)&shared.init_crypto},
};

// By default OpenSSL frees its global state in an atexit handler, while tartil's other threads may still be
// running or ending (see TartilCache's SharedLibcrypto).
static int prepare(char *failure, size_t capacity) {
    if (shared.init_crypto(OPENSSL_INIT_NO_ATEXIT, NULL) == 1) return 0;
    snprintf(failure, capacity, "OPENSSL_init_crypto failed");
    return -1;
}

static cload_library library =
    CLOAD_LIBRARY("libcrypto.so.3", "libcrypto", "", functions, sizeof functions / sizeof *functions, prepare);

const char *ccrypto_prepare_shared(void) { return cload(&library); }
