#include "cni/pod/device_info_file.h"

#include <fcntl.h>
#include <unistd.h>

#include "cni/state/state_store.h"
#include "common/json/json_dump.h"
#include "common/os/atomic_file.h"
#include "common/os/confined_path.h"

namespace rdmanet::cni {

Status writeDeviceInfo(const std::string& root, const std::string& path,
                       const nlohmann::json& doc) {
  RDMANET_ASSIGN_OR_RETURN(ConfinedFile where, resolveConfinedFile(root, path, true));
  // Through the held directory: a component swapped for a symlink since changes nothing.
  return writeFileAtomic(where.viaFd(), dumpJson(doc, 2), kCniWrite);
}

int removeDeviceInfo(const std::string& root, const std::string& path, bool file_too) {
  if (path.empty()) return 0;
  auto where = resolveConfinedFile(root, path, false);
  if (!where.ok()) return 0;
  if (file_too) (void)::unlinkat(where->dir.get(), where->name.c_str(), 0);
  return sweepAtomicTemps(std::filesystem::path(where->viaFd()).parent_path());
}

}  // namespace rdmanet::cni
