#pragma once
// IPAM delegation: running the plugin named in ipam.type (found in CNI_PATH) and making sense of
// what it says.
//
// IpamExecutor is the seam: ExecIpam forks and execve()s the delegate directly (never a shell),
// tests substitute a fake. Ipam sits on top: it picks a cniVersion the delegate accepts (the
// reference plugins stop at 1.0.0, so a 1.1.0 netconf is passed down as 1.0.0), converts
// prevResult to it, and parses the delegate's result back.

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cni/conf/env.h"
#include "cni/conf/result_types.h"
#include "cni/state/state_store.h"
#include "common/base/clock.h"
#include "common/base/result.h"

namespace rdmanet::cni {

struct ExecRequest {
  std::string type{};                        // plain file name, searched in `path`
  std::vector<std::string> path{};           // CNI_PATH
  std::map<std::string, std::string> env{};  // CNI_* overrides on top of the inherited env
  std::string stdin_data{};
};

struct ExecOutput {
  int exit_code = 0;
  std::string stdout_data{};
};

class IpamExecutor {
 public:
  virtual ~IpamExecutor() = default;
  // Runs the delegate to completion. Error 100 when the type is not found in CNI_PATH (or is not
  // an executable regular file), 999 when it cannot be started. A non-zero exit is not an error
  // here: the output carries the delegate's own error JSON.
  virtual Result<ExecOutput> exec(const ExecRequest& req) = 0;
};

// The real executor: fork + execve, stdin/stdout over pipes, stderr inherited. A delegate gets
// `timeout` to finish (ADD holds the device lock meanwhile): past it, its process group (the
// delegate and whatever it started) is killed with SIGKILL and reaped, and exec() returns error
// 11 (try again later) naming the delegate and the timeout. The timeout is measured on `clock`,
// which must outlive the executor.
class ExecIpam : public IpamExecutor {
 public:
  explicit ExecIpam(const Clock& clock,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60))
      : clock_(clock), timeout_(timeout) {}
  Result<ExecOutput> exec(const ExecRequest& req) override;

 private:
  const Clock& clock_;
  std::chrono::milliseconds timeout_;
};

// Finds `type` in `path`: the first directory holding a regular executable file of that name.
std::optional<std::string> findInPath(const std::string& type,
                                      const std::vector<std::string>& path);

class Ipam {
 public:
  // `cache` remembers per delegate which versions it accepts (may be nullptr).
  Ipam(IpamExecutor& exec, const StateStore* cache) : exec_(exec), cache_(cache) {}

  struct Call {
    std::string type{};
    nlohmann::json conf{};  // the whole netconf as the delegate should see it
    std::string version{};  // the netconf's cniVersion
    const CniEnv* env = nullptr;
    std::string command{};  // "ADD", "DEL", "CHECK", "GC"
  };

  // Runs the delegate; for ADD returns its parsed result, else an empty one. The delegate's
  // error JSON becomes an Error with its own code. `used_version` receives the version sent.
  Result<CniResult> run(const Call& call, std::string* used_version = nullptr);
  // The versions the delegate reports for VERSION (GC and STATUS go only to 1.1.0 delegates).
  Result<std::vector<std::string>> delegateVersions(const Call& call);

 private:
  Result<ExecOutput> execOnce(const Call& call, const std::string& version);
  std::optional<std::string> cachedVersion(const std::string& type, const std::string& path,
                                           const std::string& want) const;
  void rememberVersion(const std::string& type, const std::string& path, const std::string& want,
                       const std::string& got) const;

  IpamExecutor& exec_;
  const StateStore* cache_;
};

// Turns a delegate's stdout + exit code into an Error (its own code and message).
Error delegateError(const std::string& type, const ExecOutput& out);

}  // namespace rdmanet::cni
