// libcurl loaded at run time (curl_library.h): the real library resolves completely, once per
// process; a missing library or one without libcurl's symbols is a clear error, not a crash.
#include "common/kube/curl_library.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace rdmanet::kube {
namespace {

TEST(CurlLibraryTest, TheSystemLibcurlResolvesEveryFunctionOnce) {
  auto api = libcurl();
  ASSERT_TRUE(api.ok()) << api.error().msg;
  const CurlApi& c = **api;
#define RDMANET_CURL_CHECK(member, name) EXPECT_NE(c.member, nullptr) << #name;
  RDMANET_CURL_FUNCTIONS(RDMANET_CURL_CHECK)
#undef RDMANET_CURL_CHECK
  EXPECT_EQ(*libcurl(), *api) << "loaded again";
  // The table calls into the real library.
  EXPECT_STREQ(c.easy_strerror(CURLE_COULDNT_CONNECT), "Couldn't connect to server");
  char* esc = c.easy_escape(nullptr, "a=b c", 5);
  ASSERT_NE(esc, nullptr);
  EXPECT_STREQ(esc, "a%3Db%20c");
  c.free(esc);
}

TEST(CurlLibraryTest, GnuTlsIsLeftToInitialiseItselfOnlyWhenUsed) {
  // libcurl4's GnuTLS (via librtmp, libldap) must not run its load-time initialisation: that
  // is GNUTLS_NO_IMPLICIT_INIT=1 in the environment GnuTLS's constructor reads when dlopen
  // maps it.
  ASSERT_TRUE(libcurl().ok());
  ASSERT_NE(std::getenv("GNUTLS_NO_IMPLICIT_INIT"), nullptr);
  EXPECT_STREQ(std::getenv("GNUTLS_NO_IMPLICIT_INIT"), "1");
  // An operator's own setting is kept.
  ASSERT_EQ(setenv("GNUTLS_NO_IMPLICIT_INIT", "0", 1), 0);
  EXPECT_FALSE(loadLibcurl("librdmanet-no-such-curl.so.4").ok());
  EXPECT_STREQ(std::getenv("GNUTLS_NO_IMPLICIT_INIT"), "0");
  ASSERT_EQ(setenv("GNUTLS_NO_IMPLICIT_INIT", "1", 1), 0);
}

TEST(CurlLibraryTest, AMissingLibraryNamesThePackage) {
  auto api = loadLibcurl("librdmanet-no-such-curl.so.4");
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.error().code, ErrorCode::kInvalidEnv);
  EXPECT_NE(api.error().msg.find("librdmanet-no-such-curl.so.4"), std::string::npos)
      << api.error().msg;
  EXPECT_NE(api.error().msg.find("libcurl4"), std::string::npos) << api.error().msg;
}

TEST(CurlLibraryTest, ALibraryWithoutCurlsFunctionsNamesThem) {
  // zlib: a real shared library every build of the daemon loads, with none of libcurl's symbols.
  auto api = loadLibcurl("libz.so.1");
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.error().code, ErrorCode::kInvalidEnv);
  EXPECT_NE(api.error().msg.find("curl_global_init, curl_easy_init"), std::string::npos)
      << api.error().msg;
  EXPECT_NE(api.error().msg.find("curl_slist_free_all"), std::string::npos) << api.error().msg;
}

}  // namespace
}  // namespace rdmanet::kube
