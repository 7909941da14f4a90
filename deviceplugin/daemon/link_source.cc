#include "deviceplugin/daemon/link_source.h"

#include "common/net/libnl_netlink.h"
#include "common/net/link_monitor.h"
#include "deviceplugin/logging.h"

namespace rdmanet::dp {

namespace {

LinkUpdate toUpdate(const LinkInfo& l, bool deleted) {
  return {.name = l.name, .admin_up = l.admin_up, .carrier = l.carrier, .deleted = deleted};
}

class NetlinkLinkSource final : public LinkSource {
 public:
  NetlinkLinkSource(std::unique_ptr<LinkMonitor> mon, std::unique_ptr<LibnlNetlink> nl)
      : mon_(std::move(mon)), nl_(std::move(nl)) {}

  int fd() const override { return mon_->fd(); }

  std::vector<LinkUpdate> drain() override {
    std::vector<LinkUpdate> out;
    auto st =
        mon_->drain([&](const LinkInfo& l, bool deleted) { out.push_back(toUpdate(l, deleted)); });
    if (!st.ok()) logger(Component::kHealth)->warn("link monitor: {}", st.error().msg);
    return out;
  }

  bool takeResync() override { return mon_->takeResync(); }

  Result<std::vector<LinkUpdate>> dump() override {
    RDMANET_ASSIGN_OR_RETURN(auto links, nl_->links());
    std::vector<LinkUpdate> out;
    out.reserve(links.size());
    for (const auto& l : links) out.push_back(toUpdate(l, false));
    return out;
  }

  Result<std::map<int, VfLinkState>> vfLinkStates(const std::string& pf) override {
    RDMANET_ASSIGN_OR_RETURN(LinkInfo link, nl_->linkByName(pf));
    RDMANET_ASSIGN_OR_RETURN(auto vfs, nl_->vfs(link.ifindex));
    std::map<int, VfLinkState> out;
    for (const VfInfo& v : vfs) out[v.index] = v.link_state;
    return out;
  }

 private:
  std::unique_ptr<LinkMonitor> mon_;
  std::unique_ptr<LibnlNetlink> nl_;
};

}  // namespace

Result<std::unique_ptr<LinkSource>> openNetlinkLinkSource() {
  RDMANET_ASSIGN_OR_RETURN(auto mon, LinkMonitor::open());
  RDMANET_ASSIGN_OR_RETURN(auto nl, LibnlNetlink::open());
  return std::unique_ptr<LinkSource>(
      std::make_unique<NetlinkLinkSource>(std::move(mon), std::move(nl)));
}

}  // namespace rdmanet::dp
