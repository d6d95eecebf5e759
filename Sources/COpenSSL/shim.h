#ifndef GATEHOUSE_COPENSSL_SHIM_H
#define GATEHOUSE_COPENSSL_SHIM_H
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>

// OPENSSL_free is a macro (it passes __FILE__/__LINE__): wrap it for Swift.
static inline void gatehouse_openssl_free(void *pointer) {
    OPENSSL_free(pointer);
}

// BN_num_bytes is a macro over BN_num_bits.
static inline int gatehouse_bn_num_bytes(const BIGNUM *bn) {
    return BN_num_bytes(bn);
}

// EVP_PKEY_PUBLIC_KEY is built from other macros Swift does not import: the
// selection used to build a public key from (n, e) for EVP_PKEY_fromdata.
static inline int gatehouse_evp_pkey_public_key_selection(void) {
    return EVP_PKEY_PUBLIC_KEY;
}
#endif

// X.509 certificates (SSOCore/Crypto/X509Certificate.swift: attestation
// chains, certificate expiry checks).
#ifndef GATEHOUSE_COPENSSL_X509_SHIM_H
#define GATEHOUSE_COPENSSL_X509_SHIM_H
#include <openssl/ssl.h>
#include <openssl/x509.h>
#endif
