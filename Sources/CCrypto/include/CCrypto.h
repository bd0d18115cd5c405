#ifndef CCRYPTO_H
#define CCRYPTO_H
// libcrypto for TartilCache, in two ways.
//
// SHA-256 is linked from Debian's static archive (libssl-dev's libcrypto.a, the same OpenSSL as libcrypto.so.3):
// the linker takes only the objects SHA256_* need (the SHA-256 code with its SHA-extension and AVX2 assembly,
// and the CPU-feature probe, about 20 KB). Loading libcrypto.so.3 instead bound some 3,400 symbols and applied
// 17,000 relocations (about 3 million instructions, 15% of a one-ayah play). The archive's symbols are kept out
// of the executable's dynamic symbol table (`--exclude-libs`, see Package.swift), so the shared libcrypto that
// libcurl loads for TLS keeps its own functions.
//
// SHA256_Init/Update/Final are marked deprecated in OpenSSL 3.0 in favour of EVP, whose first digest costs a
// process about 5 million instructions (loading openssl.cnf, starting the default provider, fetching the method)
// against nothing for these: the same assembly without the provider layer. They are still part of libcrypto 3's
// API.
//
// The shared libcrypto.so.3 that libcurl's TLS uses is loaded by `ccrypto_prepare_shared` (through CLoad) before
// libcurl, only to initialize it without its exit handler.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <stddef.h>

int ccrypto_sha256_init(SHA256_CTX *context);
int ccrypto_sha256_update(SHA256_CTX *context, const void *bytes, size_t count);
int ccrypto_sha256_final(unsigned char *digest, SHA256_CTX *context);

// The version of the libcrypto headers (and static archive) SHA-256 was built from: "OpenSSL 3.0.19 27 Jan 2026".
const char *ccrypto_version(void);

// Loads libcrypto.so.3 (once, from any thread) and initializes it without its exit handler
// (OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT)), for libcurl. Returns NULL, or why not (text that stays as it is).
const char *ccrypto_prepare_shared(void);
#endif
