#pragma once
// SlicePublisher: keeps this node's ResourceSlices for one driver equal to a list of DraDevices.
//
// publish(devices) reconciles against what the API server holds, never against memory alone:
//   1. GET the Node once, for the owner references' uid;
//   2. list ResourceSlices with fieldSelector spec.nodeName=<node>,spec.driver=<driver>;
//   3. if they already hold exactly these devices (attributes and taints included) at one
//      generation with the right resourceSliceCount and owner, only delete surplus slices:
//      the generation is NOT bumped;
//   4. otherwise write every slice at a new generation, one above every generation of the pool
//      present (and above the last one this publisher wrote), reusing existing slices (PUT with
//      their resourceVersion, matched by the devices they hold) before creating new ones, then
//      delete the slices left over, so a slice still holding devices is updated, never deleted;
//   5. a 409 (or a 404 on update: deleted under us) re-lists and tries again, up to
//      max_attempts times, keeping the same new generation unless a higher one appeared.
// Slices of this driver on this node in another pool (older naming, another run's) are deleted
// and their generations ignored: after a restart nothing stale survives.
//
// Device taints: the API server drops `taints` silently unless its DRADeviceTaints gate is on.
// When a slice written with taints comes back without them, taintsDropped() turns true (the
// caller logs that once, naming kDeviceTaintsGate, and exports it as a metric) and taints stop
// counting as a difference, so an unchanged inventory does not rewrite the slices forever. A
// later change of taints is still written (the gate may have been turned on since). The same
// holds for allowMultipleAllocations and the DRAConsumableCapacity gate
// (multipleAllocationsDropped()).
//
// Counter sets (KEP-4815) go into slices of their own, after the device slices, in the same
// pool and generation. When the server drops them or the devices' consumesCounters (its
// DRAPartitionableDevices gate is off), partitionsDropped() turns true and the same publish
// writes the pool again as plain devices, without counter-set slices: the scheduler then does
// not count bandwidth, and the caller says so. It stays so until the publisher is made anew (a
// daemon restart tries again).
//
// Errors: 7 for invalid devices (nothing is sent); otherwise the KubeClient's errors (code 104,
// http_status set): the caller retries later, publish() leaves no half-state that a later call
// cannot repair. Not thread-safe: one caller at a time.

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/base/result.h"
#include "common/kube/client.h"
#include "common/kube/resource_slice.h"
#include "deviceplugin/dra/apiserver/slice_builder.h"
#include "deviceplugin/dra/dra_device.h"

namespace rdmanet::dra {

struct PublisherOptions {
  std::string driver = std::string(kDefaultDriverName);
  std::string node_name{};
  int max_attempts = 5;  // list-and-write rounds per publish() when the server answers 409
};

struct PublishResult {
  bool changed = false;    // something was created, updated or deleted
  int64_t generation = 0;  // the pool's generation after this publish (0: no slices)
  size_t slices = 0;       // slices of the pool now
  int created = 0, updated = 0, deleted = 0;
  int conflicts = 0;  // 409s met (and recovered from)
  bool taints_dropped = false;
  bool multiple_allocations_dropped = false;
  bool partitions_dropped = false;
};

class SlicePublisher {
 public:
  // `client` must outlive the publisher.
  SlicePublisher(kube::KubeClient& client, PublisherOptions options);

  Result<PublishResult> publish(const std::vector<DraDevice>& devices,
                                const std::vector<CounterSet>& counter_sets = {});
  // Deletes every slice of this driver on this node (the node leaves DRA).
  Status unpublishAll();
  // True once the API server was seen dropping device taints (DRADeviceTaints off).
  bool taintsDropped() const { return taints_dropped_; }
  // True once the API server was seen dropping allowMultipleAllocations (DRAConsumableCapacity
  // off).
  bool multipleAllocationsDropped() const { return multi_dropped_; }
  // True once the API server was seen dropping counter sets or consumesCounters
  // (DRAPartitionableDevices off).
  bool partitionsDropped() const { return partitions_dropped_; }

 private:
  enum class Round { kDone, kRetry };
  // This node's slices of this driver as listed: the answer, and the view of each well-formed
  // one (pointing into the answer, which the unique_ptr keeps in place).
  struct Listing {
    std::unique_ptr<nlohmann::json> doc{};
    std::vector<kube::ResourceSlice> slices{};
  };
  // `chunks`: the slices' content, in order (sliceChunks).
  Result<Round> reconcileOnce(const std::vector<SliceChunk>& chunks, const Listing& existing,
                              int64_t& target, PublishResult& out);
  Result<Listing> listSlices();
  Status ensureNodeUid();
  // Writes one slice (PUT over `old` when given, else POST); `content` is chunkJson(chunk).
  // kRetry on 409, or 404 on update.
  Result<Round> write(const kube::ResourceSlice* old, const SliceChunk& chunk,
                      const nlohmann::json& content, int64_t generation, int64_t count,
                      PublishResult& out);
  // Learns from a write's answer whether the server dropped gated fields we sent.
  void noteDropped(const SliceChunk& chunk, const nlohmann::json& sent,
                   const kube::ResourceSlice& stored);

  kube::KubeClient& client_;
  PublisherOptions options_;
  SliceOwner owner_;
  int64_t last_generation_ = 0;
  std::vector<size_t> last_digests_;  // digestsOf() the chunks last written
  bool taints_dropped_ = false;
  bool multi_dropped_ = false;
  bool partitions_dropped_ = false;
};

}  // namespace rdmanet::dra
