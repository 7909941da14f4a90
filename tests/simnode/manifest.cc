#include "tests/simnode/manifest.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace rdmanet::sim {

using nlohmann::json;

std::filesystem::path manifestPath(const std::filesystem::path& root) {
  return root / "manifest.json";
}

Result<Manifest> loadManifest(const std::filesystem::path& root) {
  std::ifstream in(manifestPath(root));
  if (!in) return makeError(ErrorCode::kDeviceNotFound, "no manifest in " + root.string());
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    const json j = json::parse(ss.str());
    Manifest m;
    m.marker = j.at("marker").get<std::string>();
    m.ifprefix = j.value("ifprefix", "");
    m.topology = j.value("topology", "");
    m.created_root = j.value("created_root", false);
    m.tree = j.value("tree", false);
    m.netns = j.value("netns", "");
    m.bridge = j.value("bridge", "");
    for (const auto& l : j.value("links", json::array())) {
      m.links.push_back(ManifestLink{.name = l.at("name").get<std::string>(),
                                     .peer = l.value("peer", ""),
                                     .pci = l.value("pci", ""),
                                     .rdma = l.value("rdma", "")});
    }
    return m;
  } catch (const json::parse_error& e) {
    return makeError(ErrorCode::kDecodeFailure, std::string("manifest: ") + e.what());
  } catch (const json::exception& e) {
    return makeError(ErrorCode::kInvalidConfig, std::string("manifest: ") + e.what());
  }
}

Status saveManifest(const std::filesystem::path& root, const Manifest& m) {
  json links = json::array();
  for (const auto& l : m.links) {
    links.push_back({{"name", l.name}, {"peer", l.peer}, {"pci", l.pci}, {"rdma", l.rdma}});
  }
  const json j = {{"marker", m.marker},     {"ifprefix", m.ifprefix},
                  {"topology", m.topology}, {"created_root", m.created_root},
                  {"tree", m.tree},         {"netns", m.netns},
                  {"bridge", m.bridge},     {"links", links}};
  const std::string text = j.dump(2) + "\n";
  const std::string tmp = manifestPath(root).string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errnoError(ErrorCode::kIoFailure, errno, "open " + tmp);
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                  ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) return errnoError(ErrorCode::kIoFailure, err, "write " + tmp);
  if (::rename(tmp.c_str(), manifestPath(root).c_str()) != 0) {
    return errnoError(ErrorCode::kIoFailure, errno, "rename " + tmp);
  }
  return okStatus();
}

}  // namespace rdmanet::sim
