#pragma once
// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with everything in it on
// destruction. For per-test sysfs roots: `TempDir dir; SimTree tree(dir.path());`.

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace rdmanet::sim {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "rdmanet-test") {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + tag + ".XXXXXX";
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace rdmanet::sim
