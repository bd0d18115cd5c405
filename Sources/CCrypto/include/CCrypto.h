#ifndef CCRYPTO_H
#define CCRYPTO_H
// libcrypto's SHA-256 for TartilCache, loaded on first use instead of linked: libcrypto binds some 3,400 symbols
// and applies 17,000 relocations as it loads (about 3 million instructions, the largest library tartil has), and
// the commands that hash nothing (`status`, the journal, listings, help) never need it. sha.h is used for its
// types only; every call goes through a function below, which calls libcrypto through a pointer found by dlsym.
// `ccrypto_load` must have succeeded before any other.
//
// SHA256_Init/Update/Final are marked deprecated in OpenSSL 3.0 in favour of EVP, whose first digest costs a
// process about 5 million instructions (loading openssl.cnf, starting the default provider, fetching the method)
// against nothing for these: the same assembly (SHA extensions where the CPU has them) without the provider layer.
// They are still part of libcrypto 3's API.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <stddef.h>

// Loads libcrypto.so.3 (once, from any thread) and initializes it without its exit handler
// (OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT)). Returns NULL, or why not (text that
// stays as it is).
const char *ccrypto_load(void);

int ccrypto_sha256_init(SHA256_CTX *context);
int ccrypto_sha256_update(SHA256_CTX *context, const void *bytes, size_t count);
int ccrypto_sha256_final(unsigned char *digest, SHA256_CTX *context);

// OpenSSL_version(OPENSSL_VERSION): "OpenSSL 3.0.19 …".
const char *ccrypto_version(void);
#endif
