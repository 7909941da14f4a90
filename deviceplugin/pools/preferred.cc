#include "deviceplugin/pools/preferred.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace rdmanet::dp {

namespace {

int anchorNuma(const std::vector<const PoolDevice*>& must,
               const std::vector<const PoolDevice*>& cands, AllocationPolicy policy) {
  if (!must.empty()) return must.front()->numa_node;
  if (cands.empty()) return -1;
  if (policy == AllocationPolicy::kGpuNear) {
    const PoolDevice* best = *std::min_element(cands.begin(), cands.end(), [](auto* a, auto* b) {
      auto da = a->gpu_distance.value_or(Distance::kSys);
      auto db = b->gpu_distance.value_or(Distance::kSys);
      return std::tie(da, a->id) < std::tie(db, b->id);
    });
    return best->numa_node;
  }
  std::map<int, int> count;
  for (auto* d : cands) ++count[d->numa_node];
  int best = cands.front()->numa_node, n = -1;
  for (auto [numa, c] : count) {  // ascending numa: ties go to the lowest node
    if (c > n || (c == n && best == -1)) best = numa, n = c;
  }
  return best;
}

// Orders candidates for pack (and gpu-near within a distance class).
void orderPack(std::vector<const PoolDevice*>& cands, const std::vector<const PoolDevice*>& must,
               int anchor, bool by_distance) {
  std::map<PciAddress, int> in_must, avail;
  for (auto* d : must) ++in_must[d->pfAddress()];
  for (auto* d : cands) ++avail[d->pfAddress()];
  std::stable_sort(cands.begin(), cands.end(), [&](auto* a, auto* b) {
    auto key = [&](const PoolDevice* d) {
      int dist = by_distance ? static_cast<int>(d->gpu_distance.value_or(Distance::kSys)) : 0;
      return std::make_tuple(!d->healthy, dist, -in_must[d->pfAddress()], d->numa_node != anchor,
                             -avail[d->pfAddress()], d->pfAddress(), d->id);
    };
    return key(a) < key(b);
  });
}

std::vector<const PoolDevice*> pickSpread(std::vector<const PoolDevice*> cands,
                                          const std::vector<const PoolDevice*>& must, int anchor,
                                          size_t want) {
  std::map<PciAddress, std::vector<const PoolDevice*>> by_pf;
  std::sort(cands.begin(), cands.end(), [](auto* a, auto* b) {
    return std::make_tuple(!a->healthy, a->id) < std::make_tuple(!b->healthy, b->id);
  });
  for (auto* d : cands) by_pf[d->pfAddress()].push_back(d);
  std::map<PciAddress, int> used;
  for (auto* d : must) ++used[d->pfAddress()];
  std::map<PciAddress, size_t> next;
  std::vector<const PoolDevice*> out;
  while (out.size() < want) {
    const PciAddress* best = nullptr;
    std::tuple<bool, bool, int, PciAddress> best_key;
    for (auto& [pf, devs] : by_pf) {
      if (next[pf] >= devs.size()) continue;
      const PoolDevice* d = devs[next[pf]];
      auto key = std::make_tuple(!d->healthy, d->numa_node != anchor, used[pf], pf);
      if (!best || key < best_key) best = &pf, best_key = key;
    }
    if (!best) break;
    out.push_back(by_pf[*best][next[*best]++]);
    ++used[*best];
  }
  return out;
}

}  // namespace

std::vector<std::string> preferredAllocation(const Pool& pool,
                                             const std::vector<std::string>& available,
                                             const std::vector<std::string>& must_include,
                                             int size) {
  std::vector<std::string> out;
  std::set<std::string> chosen;
  std::vector<const PoolDevice*> must;
  for (const std::string& id : must_include) {
    if (!chosen.insert(id).second) continue;
    out.push_back(id);
    if (const PoolDevice* d = pool.find(id)) must.push_back(d);
  }
  if (size <= 0 || out.size() >= static_cast<size_t>(size)) return out;
  std::vector<const PoolDevice*> cands;
  std::set<std::string> seen;
  for (const std::string& id : available) {
    if (chosen.count(id) || !seen.insert(id).second) continue;
    if (const PoolDevice* d = pool.find(id)) cands.push_back(d);
  }
  size_t want = static_cast<size_t>(size) - out.size();
  AllocationPolicy policy = pool.config.preferred_allocation;
  int anchor = anchorNuma(must, cands, policy);
  std::vector<const PoolDevice*> picked;
  if (policy == AllocationPolicy::kSpread) {
    picked = pickSpread(cands, must, anchor, want);
  } else {
    orderPack(cands, must, anchor, policy == AllocationPolicy::kGpuNear);
    picked.assign(cands.begin(), cands.begin() + std::min(want, cands.size()));
  }
  for (auto* d : picked) out.push_back(d->id);
  return out;
}

}  // namespace rdmanet::dp
