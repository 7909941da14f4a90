#include "common/kube/config.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>

#include "common/kube/yaml_json.h"
#include "tests/simnode/temp_dir.h"

namespace rdmanet::kube {
namespace {

void writeFile(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

class InClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    writeFile(dir_.path() / "sa/ca.crt", "PEM");
    writeFile(dir_.path() / "sa/token", "tok");
  }
  InClusterEnv env(std::string host = "10.96.0.1", std::string port = "443") {
    return {.service_host = std::move(host),
            .service_port = std::move(port),
            .sa_dir = dir_.path() / "sa"};
  }
  sim::TempDir dir_;
};

TEST_F(InClusterTest, UsesTheServiceAccountCaAndTokenFile) {
  auto c = inClusterConfig(env());
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->ca_file, (dir_.path() / "sa/ca.crt").string());
  EXPECT_EQ(c->token_file, (dir_.path() / "sa/token").string());
  EXPECT_TRUE(c->token.empty()) << "the file, not a copy, so rotation is followed";
}

TEST_F(InClusterTest, BracketsAnIpv6Host) {
  auto c = inClusterConfig(env("fd00::1", "6443"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->server, "https://[fd00::1]:6443");
}

TEST_F(InClusterTest, RejectsMissingOrBadEnvironment) {
  for (auto e :
       {env("", "443"), env("10.0.0.1", ""), env("10.0.0.1", "https"), env("10.0.0.1", "70000")}) {
    auto c = inClusterConfig(e);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.error().code, ErrorCode::kInvalidEnv) << c.error().msg;
  }
}

TEST_F(InClusterTest, MissingTokenIsNamed) {
  std::filesystem::remove(dir_.path() / "sa/token");
  auto c = inClusterConfig(env());
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::kDeviceNotFound);
  EXPECT_NE(c.error().msg.find("sa/token"), std::string::npos);
}

constexpr const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: prod
  cluster:
    server: https://prod.example:6443/
    certificate-authority-data: UEVNLUNB
- name: dev
  cluster:
    server: http://127.0.0.1:8080
    certificate-authority: certs/ca.pem
    insecure-skip-tls-verify: true
contexts:
- name: prod
  context: {cluster: prod, user: admin}
- name: dev
  context:
    cluster: dev
    user: dev-user
users:
- name: admin
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: dev-user
  user:
    tokenFile: tokens/dev
)";

TEST(KubeconfigTest, CurrentContextPicksClusterAndUser) {
  auto c = parseKubeconfig(kKubeconfig, "/etc/kube");
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->server, "http://127.0.0.1:8080");
  EXPECT_EQ(c->ca_file, "/etc/kube/certs/ca.pem") << "relative to the kubeconfig's directory";
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->token_file, "/etc/kube/tokens/dev");
}

TEST(KubeconfigTest, NamedContextWithInlineCertificates) {
  auto c = parseKubeconfig(kKubeconfig, "/etc/kube", "prod");
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->server, "https://prod.example:6443") << "trailing slash dropped";
  EXPECT_EQ(c->ca_data, "PEM-CA");
  EXPECT_EQ(c->client_cert_data, "CERT");
  EXPECT_EQ(c->client_key_data, "KEY");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
}

TEST(KubeconfigTest, JsonKubeconfigAndFixedToken) {
  const std::string text = R"({"current-context":"c","contexts":[{"name":"c","context":
    {"cluster":"k","user":"u"}}],"clusters":[{"name":"k","cluster":{"server":"https://h:1",
    "certificate-authority":"/abs/ca"}}],"users":[{"name":"u","user":{"token":"abc"}}]})";
  auto c = parseKubeconfig(text, "/x");
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->token, "abc");
  EXPECT_EQ(c->ca_file, "/abs/ca");
}

TEST(KubeconfigTest, LoadsFromAFile) {
  sim::TempDir dir;
  writeFile(dir.path() / "config", kKubeconfig);
  auto c = loadKubeconfig(dir.path() / "config");
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_EQ(c->token_file, (dir.path() / "tokens/dev").string());
  auto missing = loadKubeconfig(dir.path() / "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kIoFailure);
}

TEST(KubeconfigTest, BadKubeconfigsNameTheProblem) {
  struct Case {
    std::string text;
    std::string context;
    ErrorCode code;
    std::string says;
  };
  const std::string base = R"(contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://h"}}]
)";
  const std::vector<Case> cases = {
      {"a: [b", "", ErrorCode::kDecodeFailure, "line"},
      {"- a\n- b\n", "", ErrorCode::kInvalidConfig, "not a map"},
      {base + "users: [{name: u, user: {}}]\n", "", ErrorCode::kInvalidConfig, "current-context"},
      {base + "users: [{name: u, user: {}}]\n", "other", ErrorCode::kInvalidConfig,
       "no entry named \"other\" in contexts"},
      {base, "c", ErrorCode::kInvalidConfig, "no entry named \"u\" in users"},
      {base + "users: [{name: u, user: {exec: {command: aws}}}]\n", "c",
       ErrorCode::kUnsupportedField, "users[u].user.exec"},
      {base + "users: [{name: u, user: {client-certificate-data: '!!'}}]\n", "c",
       ErrorCode::kInvalidConfig, "client-certificate-data is not valid base64"},
      {base + "users: [{name: u, user: {client-certificate: c.pem}}]\n", "c",
       ErrorCode::kInvalidConfig, "needs its key"},
      {base + "users: [{name: u, user: {token: [a]}}]\n", "c", ErrorCode::kInvalidConfig,
       "\"users[u].user.token\" must be a string"},
      {"current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
       "clusters: [{name: k, cluster: {server: ftp://h}}]\n",
       "", ErrorCode::kInvalidConfig, "not an http(s) URL"},
  };
  for (const auto& k : cases) {
    auto c = parseKubeconfig(k.text, "/x", k.context);
    ASSERT_FALSE(c.ok()) << k.text;
    EXPECT_EQ(c.error().code, k.code) << c.error().msg;
    EXPECT_NE(c.error().msg.find(k.says), std::string::npos) << c.error().msg;
  }
}

TEST(KubeconfigTest, AnonymousUserNeedsNoUserEntry) {
  auto c = parseKubeconfig(
      "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\n"
      "clusters: [{name: k, cluster: {server: 'http://h:1'}}]\n",
      "/x");
  ASSERT_TRUE(c.ok()) << c.error().msg;
  EXPECT_TRUE(c->token.empty());
  EXPECT_TRUE(c->token_file.empty());
}

TEST(Base64Test, DecodesWithAndWithoutPaddingAndRejectsGarbage) {
  EXPECT_EQ(decodeBase64("aGVsbG8="), "hello");
  EXPECT_EQ(decodeBase64("aGVsbG8"), "hello");
  EXPECT_EQ(decodeBase64("aGVs\nbG8=\n"), "hello");
  EXPECT_EQ(decodeBase64(""), "");
  EXPECT_FALSE(decodeBase64("aGVsbG8=x").has_value());
  EXPECT_FALSE(decodeBase64("a*b").has_value());
  EXPECT_FALSE(decodeBase64("a").has_value());
}

TEST(YamlJsonTest, ScalarsStayStrings) {
  auto j = yamlToJson("base: {x: 1, y: true}\nlist: [a, 2]\n");
  ASSERT_TRUE(j.ok()) << j.error().msg;
  EXPECT_EQ((*j)["base"]["x"], "1");
  EXPECT_EQ((*j)["base"]["y"], "true");
  EXPECT_EQ((*j)["list"][1], "2");
}

TEST(YamlJsonTest, AnAliasIsRefusedNamingWhereItIs) {
  auto j = yamlToJson("base: &b {x: 1}\ncopy: *b\n");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(j.error().msg.find("anchor &b at line 1"), std::string::npos) << j.error().msg;
  auto alias_only = yamlToJson("copy: *b\n");  // an alias of nothing: refused before the load
  ASSERT_FALSE(alias_only.ok());
  EXPECT_NE(alias_only.error().msg.find("alias at line 1 column 7"), std::string::npos)
      << alias_only.error().msg;
}

// "Billion laughs": ten levels of ten aliases each would be 10^10 scalars once converted.
TEST(YamlJsonTest, NestedAliasesAreRefusedBeforeAnyExpansion) {
  std::string text = "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= 10; ++i) {
    text += fmt::format("l{}: &l{} [", i, i);
    for (int k = 0; k < 10; ++k) text += fmt::format("{}*l{}", k ? ", " : "", i - 1);
    text += "]\n";
  }
  auto j = yamlToJson(text);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(j.error().msg.find("anchors and aliases are not accepted"), std::string::npos);
}

TEST(KubeconfigTest, AKubeconfigWithAnAliasIsRefusedWithAClearError) {
  const std::string text = std::string(kKubeconfig) + "extra: &u {name: x}\nmore: *u\n";
  auto c = parseKubeconfig(text, "/etc/kube");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, ErrorCode::kInvalidConfig);
  EXPECT_NE(c.error().msg.find("YAML anchor &u"), std::string::npos) << c.error().msg;
}

}  // namespace
}  // namespace rdmanet::kube
