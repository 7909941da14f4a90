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

// Keeps the server-set timeAdded of taints that did not change, so an update does not restart
// their clocks.
void carryTaintTimes(json& devices, const json& old_devices) {
  if (!devices.is_array() || !old_devices.is_array()) return;
  for (auto& d : devices) {
    if (!d.contains("taints")) continue;
    for (const auto& od : old_devices) {
      if (!od.is_object() || od.value("name", "") != d.value("name", "") ||
          !od.contains("taints")) {
        continue;
      }
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
std::vector<size_t> digestsOf(const std::vector<SliceChunk>& chunks) {
  std::vector<size_t> out;
  out.reserve(chunks.size());
  for (const auto& c : chunks) out.push_back(std::hash<std::string>{}(dumpJson(chunkJson(c))));
  return out;
}

// What a chunk or a stored slice holds, for matching one to the other: device names, and
// counter set names marked apart (a PF's set and a PF device share a name).
std::set<std::string> contentNames(const SliceChunk& chunk) {
  std::set<std::string> out;
  for (const DraDevice* d : chunk.devices) out.insert(d->name);
  for (const CounterSet* c : chunk.counter_sets) out.insert("counters:" + c->name);
  return out;
}
std::set<std::string> contentNames(const kube::ResourceSlice& s) {
  std::set<std::string> out(s.device_names.begin(), s.device_names.end());
  for (const auto& n : s.counter_set_names) out.insert("counters:" + n);
  return out;
}

bool anyConsumesCounters(const json& devices) {
  for (const auto& d : devices) {
    if (d.contains("consumesCounters") && !d["consumesCounters"].empty()) return true;
  }
  return false;
}

// The devices as the API takes them without the DRAPartitionableDevices gate: no consumption.
std::vector<DraDevice> plainDevices(const std::vector<DraDevice>& devices) {
  std::vector<DraDevice> out = devices;
  for (DraDevice& d : out) d.consumes_counters.clear();
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
  auto meta = kube::decodeObjectMeta(*node, "");
  if (!meta.ok() || meta->uid.empty()) {
    return makeError(ErrorCode::kKubeApiFailure,
                     fmt::format("Node {} has no metadata.uid{}", owner_.node_name,
                                 meta.ok() ? "" : " (" + meta.error().msg + ")"));
  }
  owner_.node_uid = meta->uid;
  return okStatus();
}

Result<SlicePublisher::Listing> SlicePublisher::listSlices() {
  auto list = client_.list(kResourceSlicesPath,
                           {.field_selector = fmt::format("spec.nodeName={},spec.driver={}",
                                                          owner_.node_name, owner_.driver)});
  if (!list.ok()) return list.error().context("listing this node's ResourceSlices");
  Listing out{.doc = std::make_unique<json>(std::move(*list))};
  auto view = kube::decodeResourceSliceList(*out.doc);
  if (!view.ok()) return view.error().context("listing this node's ResourceSlices");
  // Only well-formed slices of ours; anything else the server holds is not ours to judge.
  for (kube::ResourceSlice& s : view->items) {
    if (kube::isDnsSubdomain(s.metadata.name)) out.slices.push_back(std::move(s));
  }
  return out;
}

Result<PublishResult> SlicePublisher::publish(const std::vector<DraDevice>& devices,
                                              const std::vector<CounterSet>& counter_sets) {
  // buildSlices validates the owner names, sliceChunks the devices and counter sets, before any
  // request goes out.
  RDMANET_RETURN_IF_ERROR(buildSlices({}, owner_, 1));
  RDMANET_ASSIGN_OR_RETURN(auto chunks, sliceChunks(devices, counter_sets));
  // Without the gate the server drops counter sets and consumption: the pool is then published
  // as plain devices (kept here, since the chunks point into it), which it stores unchanged.
  std::vector<DraDevice> plain;
  const auto toPlain = [&]() -> Status {
    plain = plainDevices(devices);
    RDMANET_ASSIGN_OR_RETURN(chunks, sliceChunks(plain, {}));
    return okStatus();
  };
  if (partitions_dropped_) RDMANET_RETURN_IF_ERROR(toPlain());
  RDMANET_RETURN_IF_ERROR(ensureNodeUid());
  PublishResult out;
  int64_t target = 0;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    const bool had_partitions = !partitions_dropped_;
    RDMANET_ASSIGN_OR_RETURN(Listing existing, listSlices());
    RDMANET_ASSIGN_OR_RETURN(Round r, reconcileOnce(chunks, existing, target, out));
    if (had_partitions && partitions_dropped_) {
      // Learnt in this round: publish the plain pool now, at a generation above the one just
      // written, rather than leave empty counter-set slices until the next change.
      RDMANET_RETURN_IF_ERROR(toPlain());
      target = 0;
      continue;
    }
    if (r == Round::kDone) {
      out.taints_dropped = taints_dropped_;
      out.multiple_allocations_dropped = multi_dropped_;
      out.partitions_dropped = partitions_dropped_;
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

Result<SlicePublisher::Round> SlicePublisher::reconcileOnce(const std::vector<SliceChunk>& chunks,
                                                            const Listing& existing,
                                                            int64_t& target, PublishResult& out) {
  const bool with_taints = !taints_dropped_;
  const bool with_multi = !multi_dropped_;
  const auto n = static_cast<int64_t>(chunks.size());
  int64_t max_gen = 0;
  std::vector<const kube::ResourceSlice*> mine, leftovers;
  for (const kube::ResourceSlice& s : existing.slices) {
    // Only our pool's generations count: another pool's (a previous run's leftover, deleted
    // below) says nothing about ours, and going above it would rewrite slices already current.
    if (s.pool.name == owner_.node_name) {
      max_gen = std::max(max_gen, s.pool.generation);
      mine.push_back(&s);
    } else {
      leftovers.push_back(&s);
    }
  }
  // Each chunk goes to the existing slice sharing most device names with it, then to any
  // unused one: an update, never a delete plus a create, for a slice that holds devices.
  std::vector<const kube::ResourceSlice*> assigned(chunks.size(), nullptr);
  std::vector<bool> used(mine.size(), false);
  for (size_t i = 0; i < chunks.size(); ++i) {
    const auto want = contentNames(chunks[i]);
    size_t best_overlap = 0;
    size_t best = mine.size();
    for (size_t j = 0; j < mine.size(); ++j) {
      if (used[j]) continue;
      size_t overlap = 0;
      for (const auto& name : contentNames(*mine[j])) overlap += want.count(name);
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

  auto ownerOk = [&](const kube::ResourceSlice& s) {
    return std::any_of(s.metadata.owner_references.begin(), s.metadata.owner_references.end(),
                       [&](const kube::OwnerReference& o) {
                         return o.kind == "Node" && o.name == owner_.node_name &&
                                o.uid == owner_.node_uid;
                       });
  };
  // `content`: chunkJson(chunk), built one at a time (see deviceGroups).
  auto upToDate = [&](const kube::ResourceSlice* s, const SliceChunk& chunk, const json& content,
                      int64_t gen) {
    if (s == nullptr || s->pool.generation != gen || s->pool.resource_slice_count != n ||
        !ownerOk(*s)) {
      return false;
    }
    if (chunk.holdsCounters()) {
      return s->devices->empty() &&
             comparableCounterSets(*s->shared_counters) == comparableCounterSets(content);
    }
    return s->shared_counters->empty() && comparableDevices(*s->devices, with_taints, with_multi) ==
                                              comparableDevices(content, with_taints, with_multi);
  };
  if (target == 0) {
    bool current = true;
    for (size_t i = 0; i < chunks.size() && current; ++i) {
      current = upToDate(assigned[i], chunks[i], chunkJson(chunks[i]), max_gen);
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
    const json content = chunkJson(chunks[i]);
    if (upToDate(assigned[i], chunks[i], content, target)) continue;
    RDMANET_ASSIGN_OR_RETURN(Round r, write(assigned[i], chunks[i], content, target, n, out));
    if (r == Round::kRetry) return Round::kRetry;
  }
  for (const kube::ResourceSlice* s : leftovers) {
    const std::string path = std::string(kResourceSlicesPath) + "/" + s->metadata.name;
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

Result<SlicePublisher::Round> SlicePublisher::write(const kube::ResourceSlice* old,
                                                    const SliceChunk& chunk, const json& content,
                                                    int64_t generation, int64_t count,
                                                    PublishResult& out) {
  json body = sliceObject(owner_, chunk.specKey(), content, generation, count);
  Result<json> stored = json();
  if (old != nullptr) {
    json update = *old->raw;
    // List items carry no apiVersion/kind; a PUT body must.
    update["apiVersion"] = body["apiVersion"];
    update["kind"] = body["kind"];
    update["spec"] = body["spec"];
    update["metadata"]["ownerReferences"] = body["metadata"]["ownerReferences"];
    if (!chunk.holdsCounters()) carryTaintTimes(update["spec"]["devices"], *old->devices);
    stored = client_.update(std::string(kResourceSlicesPath) + "/" + old->metadata.name, update);
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
  // The answer is the slice as stored; one that does not read as a slice teaches nothing.
  if (auto view = kube::decodeResourceSlice(*stored, "the stored ResourceSlice"); view.ok()) {
    noteDropped(chunk, content, *view);
  }
  return Round::kDone;
}

void SlicePublisher::noteDropped(const SliceChunk& chunk, const json& sent,
                                 const kube::ResourceSlice& stored) {
  // Nothing is learnt from a slice that did not carry the field.
  if (chunk.holdsCounters()) {
    if (stored.shared_counters->empty()) partitions_dropped_ = true;
    return;
  }
  const json& devices = *stored.devices;
  if (anyTaint(sent)) taints_dropped_ = !anyTaint(devices);
  if (anyMultipleAllocations(sent)) multi_dropped_ = !anyMultipleAllocations(devices);
  if (anyConsumesCounters(sent) && !anyConsumesCounters(devices)) partitions_dropped_ = true;
}

Status SlicePublisher::unpublishAll() {
  RDMANET_ASSIGN_OR_RETURN(Listing existing, listSlices());
  for (const kube::ResourceSlice& s : existing.slices) {
    auto st = client_.remove(std::string(kResourceSlicesPath) + "/" + s.metadata.name);
    if (!st.ok() && !kube::isNotFound(st.error())) {
      return st.error().context("deleting this node's ResourceSlices");
    }
  }
  last_digests_.clear();
  return okStatus();
}

}  // namespace rdmanet::dra
