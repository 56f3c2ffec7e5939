#include "app/detail/sha256.hpp"

#include "app/detail/crypto.hpp"
#include "app/detail/openssl_handles.hpp"

#include <openssl/evp.h>

namespace waypoint::app::detail {
namespace {

// Fetched once: an implicit fetch by name on every call would search the provider's
// algorithms each time.
const EVP_MD* sha256_md() {
  static const openssl::md_ptr md(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  if (!md) throw_openssl_failure("waypoint::app", "EVP_MD_fetch(SHA256)");
  return md.get();
}

}  // namespace

sha256_digest sha256(std::string_view bytes) {
  thread_local const openssl::md_ctx_ptr ctx(EVP_MD_CTX_new());
  sha256_digest out{};
  unsigned int size = 0;
  if (!ctx || EVP_DigestInit_ex2(ctx.get(), sha256_md(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), out.data(), &size) != 1 || size != out.size())
    throw_openssl_failure("waypoint::app", "SHA-256");
  return out;
}

}  // namespace waypoint::app::detail
