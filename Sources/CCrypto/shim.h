#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
#include <openssl/evp.h>
#include <openssl/crypto.h>
// libcrypto's EVP digest API is plain C that Swift can call directly; nothing to wrap.
#endif
