#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
// SHA256_Init/Update/Final are marked deprecated in OpenSSL 3.0 in favour of EVP, whose first digest costs a
// process about 5 million instructions (loading openssl.cnf, starting the default provider, fetching the method)
// against nothing for these: the same assembly (SHA extensions where the CPU has them) without the provider layer.
// They are still part of libcrypto 3's API; this keeps Swift from warning on every call.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <openssl/crypto.h>
// libcrypto's digest API is plain C that Swift can call directly; nothing to wrap.
#endif
