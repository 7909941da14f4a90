#include "deviceplugin/dra/apiserver/slice_publisher.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "common/json/json_access.h"
#include "common/json/json_dump.h"
#include "common/kube/api_error.h"
#include "common/kube/names.h"
#include "deviceplugin/dra/apiserver/api_paths.h"

namespace rdmanet::dra {
namespace {

using json = nlohmann::json;

int64_t generationOf(const json& s) {
  const auto& p = s["spec"]["pool"];
  return intOr<int64_t>(p, "generation", 0, 0, INT64_MAX).valueOr(0);
}

int64_t countOf(const json& s) {
  const auto& p = s["spec"]["pool"];
  return intOr<int64_t>(p, "resourceSliceCount", 0, 0, INT64_MAX).valueOr(0);
}

std::string poolOf(const json& s) {
  const auto& p = s["spec"]["pool"];
  return p.is_object() ? p.value("name", "") : "";
}

std::string nameOf(const json& s) { return s["metadata"].value("name", ""); }

std::set<std::string> deviceNames(const json& devices) {
  std::set<std::string> out;
  if (devices.is_array()) {
    for (const auto& d : devices) {
      if (d.is_object()) out.insert(d.value("name", ""));
    }
  }
  return out;
}

// Keeps the server-set timeAdded of taints that did not change, so an update does not restart
// their clocks.
void carryTaintTimes(json& devices, const json& old_devices) {
  if (!old_devices.is_array()) return;
  for (auto& d : devices) {
    if (!d.contains("taints")) continue;
    for (const auto& od : old_devices) {
      if (!od.is_object() || od.value("name", "") != d["name"] || !od.contains("taints")) continue;
      for (auto& t : d["taints"]) {
        for (const auto& ot : od["taints"]) {
          if (ot.value("key", "") == t.value("key", "") &&
              ot.value("value", "") == t.value("value", "") &&
              ot.value("effect", "") == t.value("effect", "") && ot.contains("timeAdded")) {
            t["timeAdded"] = ot["timeAdded"];
          }
        }
      }
    }
  }
}

bool anyTaint(const json& devices) {
  for (const auto& d : devices) {
    if (d.contains("taints") && !d["taints"].empty()) return true;
  }
  return false;
}

// What the publisher remembers of the chunks it wrote: a digest of each one's text, not a copy
// (1016 devices' JSON is several MB of nodes). It is only compared for equality, to tell whether
// the devices changed while the server drops a gated field; a 64-bit collision is negligible.
std::vector<size_t> digestsOf(const std::vector<DeviceGroup>& groups) {
  std::vector<size_t> out;
  out.reserve(groups.size());
  for (const auto& g : groups) out.push_back(std::hash<std::string>{}(dumpJson(chunkJson(g))));
  return out;
}

std::set<std::string> deviceNames(const DeviceGroup& group) {
  std::set<std::string> out;
  for (const DraDevice* d : group) out.insert(d->name);
  return out;
}

bool anyMultipleAllocations(const json& devices) {
  for (const auto& d : devices) {
    if (d.value("allowMultipleAllocations", false)) return true;
  }
  return false;
}

}  // namespace

SlicePublisher::SlicePublisher(kube::KubeClient& client, PublisherOptions options)
    : client_(client), options_(std::move(options)) {
  owner_.driver = options_.driver;
  owner_.node_name = options_.node_name;
}

Status SlicePublisher::ensureNodeUid() {
  if (!owner_.node_uid.empty()) return okStatus();
  RDMANET_ASSIGN_OR_RETURN(std::string path, nodePath(owner_.node_name));
  auto node = client_.get(path);
  if (!node.ok()) {
    return node.error().context(
        fmt::format("looking up Node {} (the owner of its ResourceSlices)", owner_.node_name));
  }
  const auto& meta = (*node)["metadata"];
  if (!meta.is_object() || !meta.contains("uid") || !meta["uid"].is_string()) {
    return makeError(ErrorCode::kKubeApiFailure,
                     fmt::format("Node {} has no metadata.uid", owner_.node_name));
  }
  owner_.node_uid = meta["uid"];
  return okStatus();
}

Result<json> SlicePublisher::listSlices() {
  auto list = client_.list(kResourceSlicesPath,
                           {.field_selector = fmt::format("spec.nodeName={},spec.driver={}",
                                                          owner_.node_name, owner_.driver)});
  if (!list.ok()) return list.error().context("listing this node's ResourceSlices");
  json items = list->value("items", json::array());
  if (!items.is_array()) items = json::array();
  // Only well-formed slices of ours; anything else the server holds is not ours to judge.
  json out = json::array();
  for (auto& s : items) {
    if (s.is_object() && s["metadata"].is_object() && kube::isDnsSubdomain(nameOf(s)) &&
        s["spec"].is_object()) {
      out.push_back(std::move(s));
    }
  }
  return out;
}

Result<PublishResult> SlicePublisher::publish(const std::vector<DraDevice>& devices) {
  // buildSlices validates the owner names and the devices before any request goes out.
  RDMANET_RETURN_IF_ERROR(buildSlices({}, owner_, 1));
  RDMANET_ASSIGN_OR_RETURN(auto chunks, deviceGroups(devices));
  RDMANET_RETURN_IF_ERROR(ensureNodeUid());
  PublishResult out;
  int64_t target = 0;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    RDMANET_ASSIGN_OR_RETURN(json existing, listSlices());
    RDMANET_ASSIGN_OR_RETURN(Round r, reconcileOnce(chunks, existing, target, out));
    if (r == Round::kDone) {
      out.taints_dropped = taints_dropped_;
      out.multiple_allocations_dropped = multi_dropped_;
      return out;
    }
  }
  Error e = makeError(ErrorCode::kKubeApiFailure,
                      fmt::format("the ResourceSlices of node {} kept changing under us ({} "
                                  "conflicts); will try again",
                                  owner_.node_name, out.conflicts));
  e.http_status = 409;
  return e;
}

Result<SlicePublisher::Round> SlicePublisher::reconcileOnce(const std::vector<DeviceGroup>& chunks,
                                                            const json& existing, int64_t& target,
                                                            PublishResult& out) {
  const bool with_taints = !taints_dropped_;
  const bool with_multi = !multi_dropped_;
  const auto n = static_cast<int64_t>(chunks.size());
  int64_t max_gen = 0;
  std::vector<const json*> mine, leftovers;
  for (const auto& s : existing) {
    // Only our pool's generations count: another pool's (a previous run's leftover, deleted
    // below) says nothing about ours, and going above it would rewrite slices already current.
    if (poolOf(s) == owner_.node_name) {
      max_gen = std::max(max_gen, generationOf(s));
      mine.push_back(&s);
    } else {
      leftovers.push_back(&s);
    }
  }
  // Each chunk goes to the existing slice sharing most device names with it, then to any
  // unused one: an update, never a delete plus a create, for a slice that holds devices.
  std::vector<const json*> assigned(chunks.size(), nullptr);
  std::vector<bool> used(mine.size(), false);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const auto want = deviceNames(chunks[i]);
    size_t best_overlap = 0;
    size_t best = mine.size();
    for (size_t j = 0; j < mine.size(); ++j) {
      if (used[j]) continue;
      size_t overlap = 0;
      for (const auto& name : deviceNames((*mine[j])["spec"].value("devices", json::array()))) {
        overlap += want.count(name);
      }
      if (overlap > best_overlap) {
        best_overlap = overlap;
        best = j;
      }
    }
    if (best < mine.size()) {
      assigned[i] = mine[best];
      used[best] = true;
    }
  }
  for (size_t i = 0, j = 0; i < chunks.size(); ++i) {
    while (assigned[i] == nullptr && j < mine.size()) {
      if (!used[j]) {
        assigned[i] = mine[j];
        used[j] = true;
      }
      ++j;
    }
  }
  for (size_t j = 0; j < mine.size(); ++j) {
    if (!used[j]) leftovers.push_back(mine[j]);
  }

  auto ownerOk = [&](const json& s) {
    for (const auto& o : s["metadata"].value("ownerReferences", json::array())) {
      if (o.value("kind", "") == "Node" && o.value("name", "") == owner_.node_name &&
          o.value("uid", "") == owner_.node_uid) {
        return true;
      }
    }
    return false;
  };
  // `chunk`: chunkJson(chunks[i]), built one at a time (see deviceGroups).
  auto upToDate = [&](const json* s, const json& chunk, int64_t gen) {
    return s != nullptr && generationOf(*s) == gen && countOf(*s) == n && ownerOk(*s) &&
           comparableDevices((*s)["spec"].value("devices", json::array()), with_taints,
                             with_multi) == comparableDevices(chunk, with_taints, with_multi);
  };
  if (target == 0) {
    bool current = true;
    for (size_t i = 0; i < chunks.size() && current; ++i) {
      current = upToDate(assigned[i], chunkJson(chunks[i]), max_gen);
    }
    // With taints dropped they no longer show a difference; a change of them is still written
    // (at a new generation), since the gate may have been turned on since.
    if ((taints_dropped_ || multi_dropped_) && digestsOf(chunks) != last_digests_) {
      current = false;
    }
    target = current ? max_gen : std::max(max_gen, last_generation_) + 1;
  } else if (max_gen > target) {
    target = max_gen + 1;  // someone wrote a higher generation meanwhile: go above it
  }

  for (size_t i = 0; i < chunks.size(); ++i) {
    const json chunk = chunkJson(chunks[i]);
    if (upToDate(assigned[i], chunk, target)) continue;
    RDMANET_ASSIGN_OR_RETURN(Round r, write(assigned[i], chunk, target, n, out));
    if (r == Round::kRetry) return Round::kRetry;
  }
  for (const json* s : leftovers) {
    const std::string path = std::string(kResourceSlicesPath) + "/" + nameOf(*s);
    auto st = client_.remove(path);
    if (!st.ok() && !kube::isNotFound(st.error())) {
      return st.error().context("deleting a surplus ResourceSlice");
    }
    if (st.ok()) {
      ++out.deleted;
      out.changed = true;
    }
  }
  out.generation = chunks.empty() ? 0 : target;
  out.slices = chunks.size();
  last_generation_ = std::max(last_generation_, target);
  last_digests_ = digestsOf(chunks);
  return Round::kDone;
}

Result<SlicePublisher::Round> SlicePublisher::write(const json* old, const json& chunk,
                                                    int64_t generation, int64_t count,
                                                    PublishResult& out) {
  json body = sliceObject(owner_, chunk, generation, count);
  Result<json> stored = json();
  if (old != nullptr) {
    json update = *old;
    // List items carry no apiVersion/kind; a PUT body must.
    update["apiVersion"] = body["apiVersion"];
    update["kind"] = body["kind"];
    update["spec"] = body["spec"];
    update["metadata"]["ownerReferences"] = body["metadata"]["ownerReferences"];
    carryTaintTimes(update["spec"]["devices"], (*old)["spec"].value("devices", json::array()));
    stored = client_.update(std::string(kResourceSlicesPath) + "/" + nameOf(*old), update);
  } else {
    stored = client_.create(kResourceSlicesPath, body);
  }
  if (!stored.ok()) {
    const Error& e = stored.error();
    if (kube::isConflict(e) || (old != nullptr && kube::isNotFound(e))) {
      ++out.conflicts;
      return Round::kRetry;
    }
    return e.context(old != nullptr ? "updating a ResourceSlice" : "creating a ResourceSlice");
  }
  ++(old != nullptr ? out.updated : out.created);
  out.changed = true;
  noteDropped(chunk, (*stored)["spec"].value("devices", json::array()));
  return Round::kDone;
}

void SlicePublisher::noteDropped(const json& sent, const json& stored) {
  // Nothing is learnt from a slice that did not carry the field.
  if (anyTaint(sent)) taints_dropped_ = !anyTaint(stored);
  if (anyMultipleAllocations(sent)) multi_dropped_ = !anyMultipleAllocations(stored);
}

Status SlicePublisher::unpublishAll() {
  RDMANET_ASSIGN_OR_RETURN(json existing, listSlices());
  for (const auto& s : existing) {
    auto st = client_.remove(std::string(kResourceSlicesPath) + "/" + nameOf(s));
    if (!st.ok() && !kube::isNotFound(st.error())) {
      return st.error().context("deleting this node's ResourceSlices");
    }
  }
  last_digests_.clear();
  return okStatus();
}

}  // namespace rdmanet::dra
