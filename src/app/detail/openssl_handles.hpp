// OpenSSL objects owned by std::unique_ptr, each freed by its own function: one alias per
// type, shared by the framework's users of OpenSSL (crypto.cpp, sha256.cpp, cose.cpp,
// jwt.cpp, cookies.cpp), so that no file declares its own deleters.
#pragma once

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/params.h>

#include <memory>

namespace waypoint::app::detail::openssl {

template <auto free_function>
struct freed_by {
  template <class T>
  void operator()(T* p) const noexcept {
    free_function(p);
  }
};

template <class T, auto free_function>
using owned = std::unique_ptr<T, freed_by<free_function>>;

using pkey_ptr = owned<EVP_PKEY, EVP_PKEY_free>;
using pkey_ctx_ptr = owned<EVP_PKEY_CTX, EVP_PKEY_CTX_free>;
using cipher_ptr = owned<EVP_CIPHER, EVP_CIPHER_free>;
using cipher_ctx_ptr = owned<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>;
using md_ptr = owned<EVP_MD, EVP_MD_free>;
using md_ctx_ptr = owned<EVP_MD_CTX, EVP_MD_CTX_free>;
using mac_ptr = owned<EVP_MAC, EVP_MAC_free>;
using mac_ctx_ptr = owned<EVP_MAC_CTX, EVP_MAC_CTX_free>;
using kdf_ptr = owned<EVP_KDF, EVP_KDF_free>;
using kdf_ctx_ptr = owned<EVP_KDF_CTX, EVP_KDF_CTX_free>;
using bio_ptr = owned<BIO, BIO_free>;
using ecdsa_sig_ptr = owned<ECDSA_SIG, ECDSA_SIG_free>;
using bignum_ptr = owned<BIGNUM, BN_free>;
using param_bld_ptr = owned<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>;
using params_ptr = owned<OSSL_PARAM, OSSL_PARAM_free>;

}  // namespace waypoint::app::detail::openssl
