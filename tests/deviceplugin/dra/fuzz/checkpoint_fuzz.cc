// libFuzzer target over the DRA claim checkpoint loader (deviceplugin/dra/kubelet/
// claim_checkpoint.h): the input is the checkpoint file's content (seeds: what put() writes,
// older files without "pods", and torn ones). Invariants: no crash, no exception escapes; a file
// that loads saves and loads again to the same claims.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "deviceplugin/dra/kubelet/claim_checkpoint.h"

using namespace rdmanet::dp;
namespace fs = std::filesystem;

namespace {

// Removed at exit (a static's destructor), so that replays leave nothing in /tmp.
struct ScratchDir {
  fs::path path =
      fs::temp_directory_path() / ("rdmanet-checkpoint-fuzz-" + std::to_string(getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const fs::path& scratchDir() {
  static const ScratchDir dir;
  return dir.path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fs::path file = scratchDir() / "checkpoint.json";
  {
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ClaimCheckpoint cp(file);
  if (!cp.load().ok()) return 0;
  for (const auto& [uid, c] : cp.claims()) {
    if (cp.find(uid) == nullptr) __builtin_trap();
  }
  if (cp.claims().size() > 16) return 0;  // the round trip rewrites the file once per claim
  std::filesystem::remove(scratchDir() / "copy.json");
  ClaimCheckpoint copy(scratchDir() / "copy.json");
  for (const auto& [uid, c] : cp.claims()) {
    if (!copy.put(c).ok()) __builtin_trap();
  }
  ClaimCheckpoint again(scratchDir() / "copy.json");
  if (!again.load().ok() || again.claims().size() != cp.claims().size()) __builtin_trap();
  return 0;
}
