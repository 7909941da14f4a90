// The daemon's HTTP server on loopback (deviceplugin/daemon/http_server.h): slow paths rendered
// once for the scrapes that come together and capped, probes answered while a render runs, a
// handler that throws answered 500, and the request head's refusals (the basics are in
// flags_test.cc). The hostile clients are in
// http_stall_test.cc (netns) and the real daemon's in dp_http_hostile_test.cc.
#include "deviceplugin/daemon/http_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <stdexcept>

#include "common/base/fd.h"
#include "deviceplugin/daemon/http_wire.h"
#include "tests/deviceplugin/integration/harness.h"
#include "tests/fakes/call_count.h"

namespace rdmanet::dp {
namespace {

using namespace std::chrono_literals;

using testing::connectLoopback;

void sendText(const Fd& fd, std::string_view s) {
  (void)::send(fd.get(), s.data(), s.size(), MSG_NOSIGNAL);
}

// Reads to the server's close (10 s at most).
std::string readAll(const Fd& fd) {
  std::string out;
  char buf[4096];
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    const ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string get(int port, const std::string& request) {
  Fd fd = connectLoopback(port);
  sendText(fd, request);
  return readAll(fd);
}

// A /metrics handler that counts its renders and, until the test opens the gate, blocks them.
class Renders {
 public:
  HttpResponse render() {
    renders_.enter();
    return HttpResponse{200, "text/plain", "render " + std::to_string(renders_.count()) + "\n"};
  }
  void open() { renders_.open(); }
  bool waitFor(int n) { return renders_.waitFor(n); }
  int count() { return renders_.count(); }

 private:
  ::rdmanet::testing::CallCount renders_{::rdmanet::testing::CallCount::Gate::kClosed};
};

class HttpServerRenderTest : public ::testing::Test {
 protected:
  void start(HttpLimits limits) {
    auto srv = HttpServer::start(
        "127.0.0.1:0",
        [this](const std::string& path) {
          if (path == "/metrics") return renders_.render();
          if (path == "/healthz") return HttpResponse{200, "text/plain", "ok\n"};
          if (path == "/throw") throw std::runtime_error("boom");
          return HttpResponse{404, "text/plain", "not found\n"};
        },
        {"/metrics", "/throw"}, limits);
    ASSERT_TRUE(srv.ok()) << srv.error().msg;
    server_ = std::move(srv).value();
  }
  int port() const { return server_->port(); }

  Renders renders_;
  std::unique_ptr<HttpServer> server_;
};

constexpr const char* kScrape = "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";

TEST_F(HttpServerRenderTest, ScrapesThatComeTogetherShareOneRenderAndOnesPastTheCapGet503) {
  start({.max_slow = 4, .render_max_age = 0ms});
  std::vector<Fd> scrapes;
  for (int i = 0; i < 4; ++i) {
    scrapes.push_back(connectLoopback(port()));
    sendText(scrapes.back(), kScrape);
  }
  ASSERT_TRUE(renders_.waitFor(1));
  // The fifth is refused at once, whatever the render is doing: the four hold every slot, so
  // the server has read all of them, and they all wait for the one render in progress.
  const std::string fifth = get(port(), kScrape);
  EXPECT_TRUE(fifth.starts_with("HTTP/1.1 503")) << fifth;
  // Probes do not wait for the render.
  EXPECT_TRUE(get(port(), "GET /healthz HTTP/1.1\r\n\r\n").ends_with("\r\n\r\nok\n"));
  renders_.open();
  for (const Fd& fd : scrapes) {
    const std::string reply = readAll(fd);
    EXPECT_TRUE(reply.starts_with("HTTP/1.1 200")) << reply;
    EXPECT_TRUE(reply.ends_with("\r\n\r\nrender 1\n")) << reply;
  }
  EXPECT_EQ(renders_.count(), 1);
  // With render_max_age 0, a scrape that comes later gets a render of its own.
  EXPECT_TRUE(get(port(), kScrape).ends_with("render 2\n"));
}

TEST_F(HttpServerRenderTest, AScrapeWithinTheMaxAgeOfARenderGetsItWithoutAnother) {
  start({.render_max_age = 1h});
  renders_.open();
  EXPECT_TRUE(get(port(), kScrape).ends_with("render 1\n"));
  EXPECT_TRUE(get(port(), kScrape).ends_with("render 1\n"));
  EXPECT_EQ(renders_.count(), 1);
}

TEST_F(HttpServerRenderTest, AHandlerThatThrowsIsAnswered500AndTheServerGoesOn) {
  start({});
  EXPECT_TRUE(get(port(), "GET /throw HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 500"));
  EXPECT_TRUE(get(port(), "GET /healthz HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200"));
}

// (GET, HEAD, 404, 405 and bad addresses: flags_test.cc.) A request line that is not HTTP is
// 400; a head past the limit 431.
TEST_F(HttpServerRenderTest, AMalformedOrOversizedRequestIsRefusedWithItsStatus) {
  start({.max_request_bytes = 256});
  EXPECT_TRUE(get(port(), "hello\r\n\r\n").starts_with("HTTP/1.1 400"));
  EXPECT_TRUE(get(port(), "GET /healthz HTTP/1.1\r\nX: " + std::string(300, 'x') + "\r\n\r\n")
                  .starts_with("HTTP/1.1 431"));
}

TEST(HttpWireTest, RequestHeads) {
  RequestHead h;
  EXPECT_EQ(parseRequestHead("GET /a HTTP/1.1\r\n", 100, &h), HeadState::kIncomplete);
  EXPECT_EQ(parseRequestHead("GET /a?b=c HTTP/1.0\r\nHost: x\r\n\r\n", 100, &h),
            HeadState::kComplete);
  EXPECT_EQ(h.method, "GET");
  EXPECT_EQ(h.path, "/a");
  EXPECT_EQ(parseRequestHead("GET /b HTTP/1.1\n\n", 100, &h), HeadState::kComplete);
  EXPECT_EQ(h.path, "/b");
  EXPECT_EQ(parseRequestHead("GET /a\r\n\r\n", 100, &h), HeadState::kBad);
  EXPECT_EQ(parseRequestHead(" /a HTTP/1.1\r\n\r\n", 100, &h), HeadState::kBad);
  EXPECT_EQ(parseRequestHead(std::string(101, 'x'), 100, &h), HeadState::kTooLarge);
}

}  // namespace
}  // namespace rdmanet::dp
