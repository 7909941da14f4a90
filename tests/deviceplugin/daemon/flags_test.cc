// Command-line parsing, the /metrics text and the HTTP server behind it.
#include "deviceplugin/daemon/flags.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>

#include "deviceplugin/daemon/http_server.h"
#include "deviceplugin/metrics.h"

namespace rdmanet::dp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Result<Flags> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "rdmanet-device-plugin");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  return parseFlags(static_cast<int>(argv.size()), argv.data());
}

TEST(FlagsTest, DefaultsMatchTheIssue) {
  auto f = parse({});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->kubelet_dir, "/var/lib/kubelet");
  EXPECT_EQ(f->sysfs_root, "/");
  EXPECT_EQ(f->devinfo_dir, "/var/run/k8s.cni.cncf.io/devinfo/dp");
  EXPECT_EQ(f->cdi_dir, "/var/run/cdi");
  EXPECT_EQ(f->metrics_addr, ":9109");
  EXPECT_FALSE(f->cdi);
}

TEST(FlagsTest, ARelativeConfigPathIsMadeAbsoluteSoItsDirectoryCanBeWatched) {
  auto f = parse({"--config", "pools.json"});
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_TRUE(f->config.is_absolute());
  EXPECT_EQ(f->config, std::filesystem::current_path() / "pools.json");
  EXPECT_EQ(f->config.parent_path(), std::filesystem::current_path());
}

TEST(FlagsTest, TakesSpaceAndEqualsForms) {
  auto f = parse({"--config", "/c.json", "--kubelet-dir=/k", "--sysfs-root", "/s", "--cdi",
                  "--cdi-dir=/cdi", "--devinfo-dir", "/d", "--metrics-addr", "127.0.0.1:0",
                  "--log-level=debug", "--resync-interval", "5"});
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_EQ(f->config, "/c.json");
  EXPECT_EQ(f->kubelet_dir, "/k");
  EXPECT_EQ(f->sysfs_root, "/s");
  EXPECT_TRUE(f->cdi);
  EXPECT_EQ(f->cdi_dir, "/cdi");
  EXPECT_EQ(f->metrics_addr, "127.0.0.1:0");
  EXPECT_EQ(f->log_level, "debug");
  EXPECT_EQ(f->resync_seconds, 5);
}

TEST(FlagsTest, BadFlagsNameTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string msg;
  };
  for (const Case& c :
       {Case{{"--frob"}, "--frob: unknown flag"}, Case{{"--frob=1"}, "--frob: unknown flag"},
        Case{{"--config"}, "--config: needs a value"},
        Case{{"--config="}, "--config: needs a value"},
        Case{{"--config", ""}, "--config: empty value"},
        Case{{"--resync-interval", "0"},
             "--resync-interval: \"0\" is not an integer in [1, 86400]"},
        Case{{"--resync-interval", "5s"}, "--resync-interval"}, Case{{"--cdi=maybe"}, "--cdi"},
        Case{{"--sysfs-root", "/a", "--sysfs-root", "/b"}, "--sysfs-root"},
        Case{{"stray"}, "stray: unexpected argument"}}) {
    auto f = parse(c.args);
    ASSERT_FALSE(f.ok()) << c.msg;
    EXPECT_THAT(f.error().msg, HasSubstr(c.msg));
  }
}

TEST(FlagsTest, HelpListsEveryFlag) {
  auto f = parse({"--help"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->help);
  for (const char* flag : {"--config", "--kubelet-dir", "--sysfs-root", "--devinfo-dir",
                           "--cdi-dir", "--cdi", "--metrics-addr", "--log-level", "--check-config",
                           "--help", "--install-cni", "--doctor-interval", "doctor [--json]"}) {
    EXPECT_THAT(usage(), HasSubstr(flag));
  }
}

TEST(FlagsTest, HelpIsGeneratedWithTheSubcommandAndVersionExists) {
  const std::string help = usage();
  EXPECT_THAT(help, HasSubstr("usage: rdmanet-device-plugin [OPTIONS]"));
  EXPECT_THAT(help, HasSubstr("--version"));
  EXPECT_THAT(help, HasSubstr("rdmanet-device-plugin doctor"));
  auto f = parse({"--version"});
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->version);
  EXPECT_FALSE(parse({})->version);
}

TEST(FlagsTest, CdiTakesAnOptionalBoolean) {
  EXPECT_TRUE(parse({"--cdi"})->cdi);
  EXPECT_TRUE(parse({"--cdi=true"})->cdi);
  EXPECT_FALSE(parse({"--cdi=false"})->cdi);
}

TEST(FlagsTest, DoctorIntervalDefaultsToAMinuteAndZeroDisables) {
  auto f = parse({});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->doctor_interval, std::chrono::seconds(60));
  f = parse({"--doctor-interval", "0"});
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_EQ(f->doctor_interval.count(), 0);
  f = parse({"--doctor-interval=250ms"});
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_EQ(f->doctor_interval, std::chrono::milliseconds(250));
}

TEST(FlagsTest, DurationsTakeUnitsAndRejectGarbage) {
  using std::chrono::milliseconds;
  EXPECT_EQ(parseDuration("90"), milliseconds(90000));
  EXPECT_EQ(parseDuration("90s"), milliseconds(90000));
  EXPECT_EQ(parseDuration("5m"), milliseconds(300000));
  EXPECT_EQ(parseDuration("1h"), milliseconds(3600000));
  EXPECT_EQ(parseDuration("24h"), milliseconds(86400000));
  for (const char* bad : {"", "s", "-1s", "1.5s", "10x", "25h", "1s2", " 1s", "99999999999999h"}) {
    EXPECT_FALSE(parseDuration(bad).has_value()) << bad;
  }
  auto f = parse({"--doctor-interval", "soon"});
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().msg, HasSubstr("--doctor-interval: \"soon\" is not a duration"));
}

TEST(FlagsTest, InstallCniTakesADirectory) {
  auto f = parse({"--install-cni", "/host/cni/bin"});
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_EQ(f->install_cni, "/host/cni/bin");
  f = parse({"--install-cni"});
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().msg, HasSubstr("--install-cni: needs a value"));
}

TEST(FlagsTest, DraFlagsAndTheirDefaults) {
  auto f = parse({});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->api, "deviceplugin");
  EXPECT_EQ(f->driver_name, "rdma.rdmanet.io");
  EXPECT_EQ(f->node_name, "");
  EXPECT_EQ(f->kubeconfig, "");
  EXPECT_FALSE(f->dra_allow_multiple_allocations);
  EXPECT_TRUE(f->dra_device_metadata);
  f = parse({"--api=dra", "--driver-name", "nic.example.com", "--node-name=n1", "--kubeconfig",
             "/k.yaml", "--dra-allow-multiple-allocations"});
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_EQ(f->api, "dra");
  EXPECT_EQ(f->driver_name, "nic.example.com");
  EXPECT_EQ(f->node_name, "n1");
  EXPECT_EQ(f->kubeconfig, "/k.yaml");
  EXPECT_TRUE(f->dra_allow_multiple_allocations);
  EXPECT_TRUE(f->dra_device_metadata);
  f = parse({"--no-dra-device-metadata"});
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_FALSE(f->dra_device_metadata);
  f = parse({"--dra-device-metadata=false"});
  ASSERT_TRUE(f.ok()) << f.error().msg;
  EXPECT_FALSE(f->dra_device_metadata);
  f = parse({"--api", "both"});
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().msg, HasSubstr("--api: both not in {deviceplugin,dra}"));
  for (const char* flag : {"--api", "--driver-name", "--node-name", "--kubeconfig",
                           "--dra-allow-multiple-allocations", "--no-dra-device-metadata"}) {
    EXPECT_THAT(usage(), HasSubstr(flag));
  }
}

TEST(MetricsTest, RegisteredGaugesFollowPoolsAndRemovalForgetsThem) {
  Metrics m;
  m.setPoolDevices("rdma/a", 3, 1);
  m.setPoolDevices("rdma/b", 2, 0);
  m.setRegistered("rdma/a", true);
  m.setRegistered("rdma/b", true);
  EXPECT_THAT(m.render(), HasSubstr("rdmanet_dp_registered{resource=\"rdma/b\"} 1"));
  m.removePool("rdma/b");
  EXPECT_THAT(m.render(), Not(HasSubstr("resource=\"rdma/b\"")));
  std::string text = m.render();
  EXPECT_THAT(text, HasSubstr("rdmanet_dp_devices{resource=\"rdma/a\",health=\"unhealthy\"} 1"));
  EXPECT_THAT(text, HasSubstr("# TYPE rdmanet_dp_allocate_duration_seconds histogram"));
}

TEST(MetricsTest, HistogramBucketsAreCumulative) {
  Metrics m;
  m.observeAllocateSeconds("rdma/a", 0.0002);
  m.observeAllocateSeconds("rdma/a", 0.003);
  std::string text = m.render();
  EXPECT_THAT(text, HasSubstr("le=\"0.00025\"} 1"));
  EXPECT_THAT(text, HasSubstr("le=\"0.005\"} 2"));
  EXPECT_THAT(text, HasSubstr("le=\"+Inf\"} 2"));
  EXPECT_THAT(text, HasSubstr("rdmanet_dp_allocate_duration_seconds_count{resource=\"rdma/a\"} 2"));
}

std::string get(int port, const std::string& request) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return "";
  (void)!::write(fd, request.data(), request.size());
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

TEST(HttpServerTest, ServesHandlerAnswersOnAFreePort) {
  auto srv = HttpServer::start("127.0.0.1:0", [](const std::string& path) {
    if (path == "/healthz") return HttpResponse{200, "text/plain", "ok\n"};
    return HttpResponse{404, "text/plain", "nope\n"};
  });
  ASSERT_TRUE(srv.ok()) << srv.error().msg;
  int port = (*srv)->port();
  ASSERT_GT(port, 0);
  std::string ok = get(port, "GET /healthz?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_THAT(ok, ::testing::StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(ok, HasSubstr("Content-Length: 3\r\n"));
  EXPECT_THAT(ok, ::testing::EndsWith("\r\n\r\nok\n"));
  EXPECT_THAT(get(port, "GET /x HTTP/1.1\r\n\r\n"), ::testing::StartsWith("HTTP/1.1 404"));
  EXPECT_THAT(get(port, "POST /healthz HTTP/1.1\r\n\r\n"), ::testing::StartsWith("HTTP/1.1 405"));
  // A request line that is not METHOD TARGET HTTP/x.y.
  EXPECT_THAT(get(port, "garbage\r\n\r\n"), ::testing::MatchesRegex("HTTP/1\\.[01] 400 .*"));
  auto head = get(port, "HEAD /healthz HTTP/1.1\r\n\r\n");
  EXPECT_THAT(head, ::testing::StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(head, ::testing::EndsWith("\r\n\r\n"));  // headers only
}

TEST(HttpServerTest, APortInUseIsAnIoErrorNamingTheAddress) {
  auto handler = [](const std::string&) { return HttpResponse{}; };
  auto first = HttpServer::start("127.0.0.1:0", handler);
  ASSERT_TRUE(first.ok()) << first.error().msg;
  const std::string addr = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = HttpServer::start(addr, handler);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kIoFailure);
  EXPECT_THAT(second.error().msg, HasSubstr("cannot listen on " + addr));
}

TEST(HttpServerTest, RejectsBadAddresses) {
  for (const char* addr : {"nowhere", "1.2.3.4:99999", "not-an-ip:80", "[zz]:1"}) {
    auto srv = HttpServer::start(addr, [](const std::string&) { return HttpResponse{}; });
    ASSERT_FALSE(srv.ok()) << addr;
    EXPECT_EQ(srv.error().code, ErrorCode::kInvalidConfig) << addr;
    EXPECT_THAT(srv.error().msg, HasSubstr("--metrics-addr"));
  }
}

}  // namespace
}  // namespace rdmanet::dp
