#include "cni/conf/env.h"

#include <gtest/gtest.h>

#include <map>

namespace rdmanet::cni {
namespace {

using Env = std::map<std::string, std::string>;

Result<CniEnv> parse(const Env& env) {
  return parseEnv([&](const char* k) -> std::optional<std::string> {
    auto it = env.find(k);
    if (it == env.end()) return std::nullopt;
    return it->second;
  });
}

Env addEnv() {
  return {{"CNI_COMMAND", "ADD"},
          {"CNI_CONTAINERID", "abc123"},
          {"CNI_NETNS", "/var/run/netns/pod"},
          {"CNI_IFNAME", "net1"},
          {"CNI_PATH", "/opt/cni/bin::/usr/lib/cni"}};
}

TEST(EnvTest, ParsesAFullAddEnvironment) {
  auto r = parse(addEnv());
  ASSERT_TRUE(r.ok()) << r.error().msg;
  EXPECT_EQ(r->command, Command::kAdd);
  EXPECT_EQ(r->container_id, "abc123");
  EXPECT_EQ(r->netns, "/var/run/netns/pod");
  EXPECT_EQ(r->ifname, "net1");
  EXPECT_EQ(r->path, (std::vector<std::string>{"/opt/cni/bin", "/usr/lib/cni"}));
}

TEST(EnvTest, VersionNeedsNothingElse) {
  auto r = parse({{"CNI_COMMAND", "VERSION"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->command, Command::kVersion);
}

TEST(EnvTest, DelAcceptsAnEmptyNetns) {
  Env e = addEnv();
  e["CNI_COMMAND"] = "DEL";
  e["CNI_NETNS"] = "";
  auto r = parse(e);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->netns.empty());
}

TEST(EnvTest, GcAndStatusNeedNoAttachmentVariables) {
  for (const char* cmd : {"GC", "STATUS"}) {
    auto r = parse({{"CNI_COMMAND", cmd}, {"CNI_PATH", "/usr/lib/cni"}});
    ASSERT_TRUE(r.ok()) << cmd;
  }
}

struct BadEnv {
  const char* name;
  std::string var;
  std::optional<std::string> value;  // nullopt: unset
  std::string command = "ADD";
};
void PrintTo(const BadEnv& b, std::ostream* os) { *os << b.name; }

class BadEnvTest : public ::testing::TestWithParam<BadEnv> {};

TEST_P(BadEnvTest, FailsWithCode4NamingTheVariable) {
  const BadEnv& c = GetParam();
  Env e = addEnv();
  e["CNI_COMMAND"] = c.command;
  if (c.value) {
    e[c.var] = *c.value;
  } else {
    e.erase(c.var);
  }
  auto r = parse(e);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidEnv);
  EXPECT_NE(r.error().msg.find(c.var), std::string::npos) << r.error().msg;
}

INSTANTIATE_TEST_SUITE_P(
    Battery, BadEnvTest,
    ::testing::Values(BadEnv{"NoCommand", "CNI_COMMAND", std::nullopt},
                      BadEnv{"UnknownCommand", "CNI_COMMAND", "FROB", "FROB"},
                      BadEnv{"NoContainerId", "CNI_CONTAINERID", std::nullopt},
                      BadEnv{"ContainerIdWithSlash", "CNI_CONTAINERID", "../etc"},
                      BadEnv{"ContainerIdStartsWithDash", "CNI_CONTAINERID", "-abc"},
                      BadEnv{"ContainerIdTooLong", "CNI_CONTAINERID", std::string(300, 'a')},
                      BadEnv{"NoIfname", "CNI_IFNAME", std::nullopt},
                      BadEnv{"IfnameTooLong", "CNI_IFNAME", "abcdefghijklmnop"},
                      BadEnv{"IfnameWithSlash", "CNI_IFNAME", "a/b"},
                      BadEnv{"IfnameWithColon", "CNI_IFNAME", "eth0:1"},
                      BadEnv{"IfnameWithSpace", "CNI_IFNAME", "eth 1"},
                      BadEnv{"IfnameDotDot", "CNI_IFNAME", ".."},
                      BadEnv{"NoNetnsOnAdd", "CNI_NETNS", std::nullopt},
                      BadEnv{"NoNetnsOnCheck", "CNI_NETNS", std::nullopt, "CHECK"},
                      BadEnv{"RelativeNetns", "CNI_NETNS", "var/run/netns/x"},
                      BadEnv{"NetnsWithDotDot", "CNI_NETNS", "/var/run/netns/../../etc/passwd"},
                      BadEnv{"NoPath", "CNI_PATH", std::nullopt},
                      BadEnv{"ArgsWithoutEquals", "CNI_ARGS", "FOO"},
                      BadEnv{"ArgsUnknownKey", "CNI_ARGS", "FOO=bar"},
                      BadEnv{"ArgsBadKey", "CNI_ARGS", "F$O=bar;IgnoreUnknown=1"}),
    [](const auto& info) { return info.param.name; });

TEST(EnvTest, FifteenCharIfnameIsValid) {
  Env e = addEnv();
  e["CNI_IFNAME"] = "abcdefghijklmno";
  EXPECT_TRUE(parse(e).ok());
}

TEST(CniArgsTest, AcceptsKubernetesArgsWithIgnoreUnknown) {
  auto a = parseCniArgs(
      "IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_INFRA_CONTAINER_ID=c;"
      "K8S_POD_UID=u;MAC=02:00:00:00:00:01;FOO=bar");
  ASSERT_TRUE(a.ok()) << a.error().msg;
  EXPECT_TRUE(a->ignore_unknown);
  EXPECT_EQ(a->pod_namespace, "ns");
  EXPECT_EQ(a->pod_name, "p");
  EXPECT_EQ(a->pod_infra_container_id, "c");
  EXPECT_EQ(a->pod_uid, "u");
  EXPECT_EQ(a->mac, "02:00:00:00:00:01");
  EXPECT_EQ(a->all.size(), 7u);
}

TEST(CniArgsTest, KubernetesKeysAreKnownWithoutIgnoreUnknown) {
  EXPECT_TRUE(parseCniArgs("K8S_POD_NAME=p;K8S_POD_NAMESPACE=ns").ok());
}

TEST(CniArgsTest, IgnoresEmptyPairs) {
  auto a = parseCniArgs(";;MAC=02:00:00:00:00:01;");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->all.size(), 1u);
}

}  // namespace
}  // namespace rdmanet::cni
