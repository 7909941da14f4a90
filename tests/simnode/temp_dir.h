#pragma once
// TempDir: a fresh directory under $TMPDIR (or /tmp), removed with everything in it on
// destruction. For per-test sysfs roots: `TempDir dir; SimTree tree(dir.path());`. With it, the
// two reads file tests make of what they wrote: a file's bytes and a directory's names.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace rdmanet::sim {

class TempDir {
 public:
  // Under `base` when given, else $TMPDIR or /tmp.
  explicit TempDir(const std::string& tag = "rdmanet-test", const std::string& base = "") {
    const char* env = std::getenv("TMPDIR");
    const std::string dir = !base.empty() ? base : (env && *env ? env : "/tmp");
    std::string tmpl = dir + "/" + tag + ".XXXXXX";
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

// The whole content of `p` ("" when it cannot be read).
inline std::string readFileText(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The names in `dir`, sorted.
inline std::vector<std::string> dirEntries(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace rdmanet::sim
