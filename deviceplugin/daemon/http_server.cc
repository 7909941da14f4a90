#include "deviceplugin/daemon/http_server.h"

#include <malloc.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "common/base/clock.h"
#include "common/os/worker.h"
#include "deviceplugin/daemon/http_wire.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace {

using SteadyTime = Clock::time_point;

// A reply as sent: shared by every connection that sends it (a render's, by all its scrapers).
struct Reply {
  std::string head;
  std::string body;
};

std::shared_ptr<const Reply> makeReply(HttpResponse r) {
  auto reply = std::make_shared<Reply>();
  reply->head = replyHead(r.status, r.content_type, r.body.size());
  reply->body = std::move(r.body);
  return reply;
}

std::shared_ptr<const Reply> plainReply(int status, std::string_view text) {
  return makeReply({.status = status, .content_type = "text/plain", .body = std::string(text)});
}

enum class Phase { kReading, kWaiting, kWriting };

struct Conn {
  Fd fd;
  Phase phase = Phase::kReading;
  SteadyTime accepted;
  SteadyTime deadline;
  std::string in{};         // the request so far
  std::string slow_path{};  // set while it counts against max_slow
  std::shared_ptr<const Reply> reply{};
  bool head_only = false;
  size_t sent = 0;
  bool done = false;  // answered, or the client is gone: closed at the end of the turn
};

// What the loop keeps of one slow path.
struct SlowPath {
  std::shared_ptr<const Reply> last;  // the latest render, while young or in use
  SteadyTime started;                 // when it started
  bool rendering = false;
};

// A finished render, from the render thread to the loop.
struct Rendered {
  std::string path;
  std::shared_ptr<const Reply> reply;
  SteadyTime started;
};

}  // namespace

struct HttpServer::Impl {
  const SteadyClock real_clock{};  // `clock` when start() was given none
  const Clock& clock;
  Impl(Handler h, std::set<std::string> slow, const HttpLimits& l, Fd listener, int p,
       const Clock* c)
      : clock(c != nullptr ? *c : real_clock),
        handler(std::move(h)),
        slow_paths(std::move(slow)),
        limits(l),
        listen_fd(std::move(listener)),
        wake_fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)),
        port(p),
        renderer(clock, [this](const std::atomic<bool>& quit) { return renderPending(quit); }) {}

  void run();
  std::optional<Clock::time_point> renderPending(const std::atomic<bool>& quit);
  void signal() {
    const uint64_t one = 1;
    (void)!::write(wake_fd.get(), &one, sizeof(one));
  }

  void acceptAll(SteadyTime now);
  void onReadable(Conn& c, SteadyTime now);
  void onWritable(Conn& c);
  void answer(Conn& c, const RequestHead& head, SteadyTime now);
  void send(Conn& c, std::shared_ptr<const Reply> reply);
  void takeRendered(SteadyTime now);
  // Closes a connection; `reset` drops what the kernel still holds of its reply (a reply cut
  // at its deadline: the client gets a reset, and the socket's buffers are freed at once instead
  // of going on draining to a slow reader).
  void close(std::list<Conn>::iterator it, bool reset = false);

  const Handler handler;
  const std::set<std::string> slow_paths;
  const HttpLimits limits;
  Fd listen_fd;
  Fd wake_fd;  // the render thread's results, and the stop
  const int port;
  std::atomic<bool> stop{false};

  // The loop's own.
  std::list<Conn> conns;
  std::map<std::string, SlowPath> slow;
  SteadyTime accept_paused_until{};  // out of fds with none to free: accept again then
  int slow_count = 0;
  std::thread loop;

  // Between the loop and the render thread.
  std::mutex mu;
  std::vector<std::string> to_render;  // guarded by mu
  std::vector<Rendered> rendered;      // guarded by mu
  Worker renderer;  // last but the loop: its thread may start on the members above at once
};

Result<std::unique_ptr<HttpServer>> HttpServer::start(const std::string& addr, Handler handler,
                                                      std::set<std::string> slow_paths,
                                                      const HttpLimits& limits,
                                                      const Clock* clock) {
  int port = 0;
  RDMANET_ASSIGN_OR_RETURN(Fd listener, listenOn(addr, limits.max_connections, &port));
  auto impl = std::make_unique<Impl>(std::move(handler), std::move(slow_paths), limits,
                                     std::move(listener), port, clock);
  if (impl->wake_fd.get() < 0) return makeError(ErrorCode::kIoFailure, "eventfd failed");
  Impl* raw = impl.get();
  impl->loop = std::thread([raw] { raw->run(); });
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() {
  impl_->stop = true;
  impl_->signal();
  impl_->loop.join();
  impl_->renderer.requestStop();  // its destructor waits for a render in progress
}

int HttpServer::port() const { return impl_->port; }

std::optional<Clock::time_point> HttpServer::Impl::renderPending(const std::atomic<bool>& quit) {
  while (!quit) {
    std::string path;
    {
      std::lock_guard lk(mu);
      if (to_render.empty()) break;
      path = std::move(to_render.back());
      to_render.pop_back();
    }
    const SteadyTime started = clock.now();
    HttpResponse r;
    try {
      r = handler(path);
    } catch (const std::exception& e) {
      logger(Component::kMetrics)->error("rendering {} threw: {}", path, e.what());
      r = {.status = 500, .content_type = "text/plain", .body = "render failed\n"};
    }
    auto reply = makeReply(std::move(r));
    {
      std::lock_guard lk(mu);
      rendered.push_back({.path = path, .reply = std::move(reply), .started = started});
    }
    signal();
  }
  return std::nullopt;
}

void HttpServer::Impl::run() {
  std::vector<pollfd> fds;
  std::vector<std::list<Conn>::iterator> at;  // the connection of fds[i + 2]
  while (!stop) {
    auto now = clock.now();
    // Deadlines first: what is past its own is closed before anything else is looked at.
    SteadyTime next = SteadyTime::max();
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->deadline <= now) {
        close(it++, /*reset=*/true);
      } else {
        next = std::min(next, it->deadline);
        ++it;
      }
    }
    // A render nobody sends any more is let go once it is too old to serve a new request.
    for (auto& [path, s] : slow) {
      if (!s.last) continue;
      const SteadyTime stale = s.started + limits.render_max_age;
      if (s.last.use_count() == 1 && stale <= now) {
        s.last.reset();
        malloc_trim(0);  // a 1016-pod body is megabytes: give them back
      } else if (s.last.use_count() == 1) {
        next = std::min(next, stale);
      }
    }
    fds.clear();
    at.clear();
    const bool accepting = accept_paused_until <= now;
    if (!accepting) next = std::min(next, accept_paused_until);
    fds.push_back({listen_fd.get(), static_cast<short>(accepting ? POLLIN : 0), 0});
    fds.push_back({wake_fd.get(), POLLIN, 0});
    for (auto it = conns.begin(); it != conns.end(); ++it) {
      const short events = it->phase == Phase::kReading   ? POLLIN
                           : it->phase == Phase::kWriting ? POLLOUT
                                                          : 0;
      fds.push_back({it->fd.get(), events, 0});
      at.push_back(it);
    }
    int timeout = -1;
    if (next != SteadyTime::max()) {
      timeout = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(next - now).count());
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0) {
      if (errno == EINTR) continue;
      logger(Component::kMetrics)->error("http: poll failed: {}", errno);
      return;
    }
    now = clock.now();
    if (fds[1].revents != 0) {
      uint64_t n = 0;
      (void)!::read(wake_fd.get(), &n, sizeof(n));
      takeRendered(now);
    }
    for (size_t i = 0; i < at.size(); ++i) {
      const short rev = fds[i + 2].revents;
      if (rev == 0) continue;
      Conn& c = *at[i];
      if (c.phase == Phase::kReading && (rev & (POLLIN | POLLHUP | POLLERR))) onReadable(c, now);
      if (c.phase == Phase::kWriting && (rev & (POLLOUT | POLLHUP | POLLERR))) onWritable(c);
      // A client gone while its render runs: no one to send it to.
      if (c.phase == Phase::kWaiting && (rev & (POLLHUP | POLLERR))) c.done = true;
    }
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->done) {
        close(it++);
      } else {
        ++it;
      }
    }
    if (fds[0].revents & POLLIN) acceptAll(now);
  }
  while (!conns.empty()) close(conns.begin());
}

void HttpServer::Impl::acceptAll(SteadyTime now) {
  while (true) {
    Fd fd(::accept4(listen_fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    const bool no_fds = fd.get() < 0 && (errno == EMFILE || errno == ENFILE);
    if (fd.get() < 0 && !no_fds) return;  // EAGAIN: all taken; else the next turn tries again
    if (no_fds || conns.size() >= static_cast<size_t>(limits.max_connections)) {
      // The one that has waited longest for its request goes; with none reading, the new one.
      auto oldest = conns.end();
      for (auto it = conns.begin(); it != conns.end(); ++it) {
        if (it->phase == Phase::kReading &&
            (oldest == conns.end() || it->accepted < oldest->accepted)) {
          oldest = it;
        }
      }
      if (oldest == conns.end()) {
        if (!no_fds) continue;  // `fd` closes
        // Nothing to free: a listener that stays readable would spin the loop.
        accept_paused_until = now + std::chrono::milliseconds(100);
        return;
      }
      close(oldest);
      if (no_fds) continue;  // accept again, with the fd just freed
    }
    conns.push_back(
        Conn{.fd = std::move(fd), .accepted = now, .deadline = now + limits.request_timeout});
  }
}

void HttpServer::Impl::onReadable(Conn& c, SteadyTime now) {
  char buf[2048];
  while (true) {
    const ssize_t n = ::recv(c.fd.get(), buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      c.done = true;  // gone before its request was whole
      return;
    }
    if (n < 0) return;
    c.in.append(buf, static_cast<size_t>(n));
    RequestHead head;
    switch (parseRequestHead(c.in, static_cast<size_t>(limits.max_request_bytes), &head)) {
      case HeadState::kIncomplete:
        continue;
      case HeadState::kTooLarge:
        c.deadline = now + limits.reply_timeout;
        send(c, plainReply(431, "request head too large\n"));
        return;
      case HeadState::kBad:
        c.deadline = now + limits.reply_timeout;
        send(c, plainReply(400, "bad request\n"));
        return;
      case HeadState::kComplete:
        c.in.clear();
        c.in.shrink_to_fit();
        answer(c, head, now);
        return;
    }
  }
}

void HttpServer::Impl::answer(Conn& c, const RequestHead& head, SteadyTime now) {
  c.deadline = now + limits.reply_timeout;
  if (head.method != "GET" && head.method != "HEAD") {
    send(c, plainReply(405, "only GET\n"));
    return;
  }
  c.head_only = head.method == "HEAD";
  if (!slow_paths.contains(head.path)) {
    HttpResponse r;
    try {
      r = handler(head.path);
    } catch (const std::exception& e) {
      logger(Component::kMetrics)->error("answering {} threw: {}", head.path, e.what());
      r = {.status = 500, .content_type = "text/plain", .body = "failed\n"};
    }
    send(c, makeReply(std::move(r)));
    return;
  }
  if (slow_count >= limits.max_slow) {
    send(c, plainReply(503, "too many scrapes at once; try again\n"));
    return;
  }
  ++slow_count;
  c.slow_path = head.path;
  SlowPath& s = slow[head.path];
  if (s.last && now - s.started <= limits.render_max_age) {
    send(c, s.last);
    return;
  }
  c.phase = Phase::kWaiting;
  if (!s.rendering) {
    s.rendering = true;
    {
      std::lock_guard lk(mu);
      to_render.push_back(head.path);
    }
    renderer.wake();
  }
}

void HttpServer::Impl::takeRendered(SteadyTime now) {
  std::vector<Rendered> done;
  {
    std::lock_guard lk(mu);
    done.swap(rendered);
  }
  (void)now;
  for (Rendered& r : done) {
    SlowPath& s = slow[r.path];
    s.rendering = false;
    s.started = r.started;
    s.last = r.reply;
    for (Conn& c : conns) {
      if (c.phase == Phase::kWaiting && c.slow_path == r.path) send(c, r.reply);
    }
  }
}

void HttpServer::Impl::send(Conn& c, std::shared_ptr<const Reply> reply) {
  c.reply = std::move(reply);
  c.phase = Phase::kWriting;
  c.sent = 0;
  onWritable(c);  // most replies fit the socket buffer: done at once
}

void HttpServer::Impl::onWritable(Conn& c) {
  const Reply& r = *c.reply;
  const size_t total = r.head.size() + (c.head_only ? 0 : r.body.size());
  while (c.sent < total) {
    const bool in_head = c.sent < r.head.size();
    const char* p = in_head ? r.head.data() + c.sent : r.body.data() + (c.sent - r.head.size());
    const size_t len = in_head ? r.head.size() - c.sent : total - c.sent;
    const ssize_t n = ::send(c.fd.get(), p, len, MSG_NOSIGNAL | (in_head ? MSG_MORE : 0));
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) break;  // the client is gone
    c.sent += static_cast<size_t>(n);
  }
  c.done = true;  // all sent (or nowhere to send it): closing ends the reply
}

void HttpServer::Impl::close(std::list<Conn>::iterator it, bool reset) {
  if (!it->slow_path.empty()) --slow_count;
  if (reset) {
    const linger drop{.l_onoff = 1, .l_linger = 0};
    (void)::setsockopt(it->fd.get(), SOL_SOCKET, SO_LINGER, &drop, sizeof(drop));
    conns.erase(it);
    return;
  }
  if (it->phase != Phase::kReading) {
    // Unread request bytes make close() reset the connection, which can drop the reply's last
    // bytes still in flight: take them first.
    char buf[512];
    while (::recv(it->fd.get(), buf, sizeof(buf), MSG_DONTWAIT) > 0) {
    }
  }
  conns.erase(it);
}

}  // namespace rdmanet::dp
