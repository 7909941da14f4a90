// The client over TLS, as it talks to a real API server: the stand-in serving HTTPS with a
// throw-away CA, authenticating by client certificate or bearer token.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/kube/api_error.h"
#include "common/kube/client.h"
#include "tests/common/kube/test_certs.h"
#include "tests/fakes/fake_apiserver.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::kube {
namespace {

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ClientTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto e = makeTestCerts(dir_.path()); !e.empty()) GTEST_SKIP() << e;
    server_ = std::make_unique<testing::FakeApiServer>(std::vector<std::string>{"tok"},
                                                       dir_.path().string());
    if (!server_->ok()) GTEST_SKIP() << server_->error();
  }
  Status probe(const KubeConfig& cfg) {
    KubeClient c(cfg, {.retry = {.max_attempts = 1}});
    auto r = c.list("/api/v1/nodes");
    if (!r.ok()) return r.error();
    return okStatus();
  }
  std::string file(const char* name) { return (dir_.path() / name).string(); }

  sim::TempDir dir_;
  std::unique_ptr<testing::FakeApiServer> server_;
};

TEST_F(ClientTlsTest, ClientCertificateFilesAndCaFile) {
  KubeConfig cfg = server_->config();
  cfg.client_cert_file = file("client.crt");
  cfg.client_key_file = file("client.key");
  auto st = probe(cfg);
  EXPECT_TRUE(st.ok()) << st.error().msg;
}

TEST_F(ClientTlsTest, InlineCaAndClientCertificateData) {
  KubeConfig cfg;
  cfg.server = server_->url();
  cfg.ca_data = slurp(file("ca.crt"));
  cfg.client_cert_data = slurp(file("client.crt"));
  cfg.client_key_data = slurp(file("client.key"));
  auto st = probe(cfg);
  EXPECT_TRUE(st.ok()) << st.error().msg;
}

TEST_F(ClientTlsTest, BearerTokenOverTls) {
  KubeConfig cfg = server_->config();
  cfg.token = "tok";
  auto st = probe(cfg);
  EXPECT_TRUE(st.ok()) << st.error().msg;
  cfg.token.clear();
  st = probe(cfg);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(isUnauthorized(st.error()));
}

TEST_F(ClientTlsTest, AnUntrustedServerIsRefused) {
  KubeConfig cfg = server_->config();
  cfg.ca_file.clear();  // the system trust store does not know the test CA
  cfg.token = "tok";
  auto st = probe(cfg);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(isNoAnswer(st.error())) << st.error().msg;
  cfg.insecure_skip_tls_verify = true;
  st = probe(cfg);
  EXPECT_TRUE(st.ok()) << st.error().msg;
}

TEST_F(ClientTlsTest, KubeconfigWithInlineDataReachesTheServer) {
  auto b64 = [&](const char* name) {
    const std::string in = slurp(file(name));
    static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    int val = 0, bits = -6;
    for (unsigned char c : in) {
      val = (val << 8) + c;
      bits += 8;
      while (bits >= 0) {
        out.push_back(k[(val >> bits) & 0x3F]);
        bits -= 6;
      }
    }
    if (bits > -6) out.push_back(k[((val << 8) >> (bits + 8)) & 0x3F]);
    while (out.size() % 4) out.push_back('=');
    return out;
  };
  const std::string text =
      "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
      "clusters:\n- name: k\n  cluster:\n    server: " +
      server_->url() + "\n    certificate-authority-data: " + b64("ca.crt") +
      "\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\n"
      "users:\n- name: u\n  user:\n    client-certificate-data: " +
      b64("client.crt") + "\n    client-key-data: " + b64("client.key") + "\n";
  std::ofstream(dir_.path() / "kubeconfig") << text;
  auto cfg = loadKubeconfig(dir_.path() / "kubeconfig");
  ASSERT_TRUE(cfg.ok()) << cfg.error().msg;
  auto st = probe(*cfg);
  EXPECT_TRUE(st.ok()) << st.error().msg;
}

}  // namespace
}  // namespace rdmanet::kube
