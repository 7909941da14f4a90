// Device resolution and mode dispatch (mode.h).
#include <fmt/format.h>

#include "cni/modes/mode.h"
#include "common/inventory/netdev.h"
#include "common/inventory/pci.h"
#include "common/json/json_fields.h"

namespace rdmanet::cni {
namespace {

Result<std::string> firstNetdev(const Sysfs& sysfs, const PciFunction& fn, std::string_view what) {
  const auto names = netdevNamesOf(sysfs, fn.address);
  if (names.empty()) {
    return makeError(
        ErrorCode::kDeviceNotFound,
        fmt::format("{} {} has no netdev (driver \"{}\")", what, fn.address.str(), fn.driver),
        "bind it to its kernel network driver, not vfio-pci");
  }
  return names.front();
}

Status checkKnobsFitMode(const NetConf& c, Mode mode) {
  if (mode == Mode::kSriov) return okStatus();
  const char* key = c.spoofchk                         ? "spoofchk"
                    : c.trust                          ? "trust"
                    : c.link_state                     ? "link_state"
                    : (c.min_tx_rate || c.max_tx_rate) ? "min_tx_rate/max_tx_rate"
                                                       : nullptr;
  if (key == nullptr) return okStatus();
  return invalidConfig(
      fmt::format("\"{}\" applies to SR-IOV VFs only, but the mode is {}", key, modeName(mode)));
}

}  // namespace

Result<ResolvedDevice> resolveDevice(const NetConf& c, PluginDeps& deps) {
  ResolvedDevice d;
  std::optional<PciFunction> fn;
  // macvlan never uses the function a stray deviceID names (it only picks the mode when neither
  // `mode` nor `master` does), so that sysfs read is skipped on every macvlan ADD.
  const bool macvlan = c.mode ? *c.mode == Mode::kMacvlan : !c.master.empty();
  if (c.device_id && !macvlan) {
    auto r = readPciFunction(deps.sysfs, *c.device_id);
    if (!r.ok()) {
      // Only fatal when the mode needs the function (with a master, the mode check below
      // gives the better message).
      if (c.master.empty()) {
        return makeError(ErrorCode::kDeviceNotFound,
                         fmt::format("PCI device {} not found", c.device_id->str()));
      }
    } else {
      fn = std::move(r).value();
    }
  }
  if (c.mode) {
    d.mode = *c.mode;
  } else if (!c.master.empty()) {
    d.mode = Mode::kMacvlan;
  } else if (fn) {
    d.mode = fn->isVf() ? Mode::kSriov : Mode::kHostDevice;
  } else {
    d.mode = Mode::kHostDevice;
  }
  RDMANET_RETURN_IF_ERROR(checkKnobsFitMode(c, d.mode));

  switch (d.mode) {
    case Mode::kSriov: {
      if (!fn) return invalidConfig("mode sriov needs \"deviceID\"");
      if (!fn->isVf()) {
        return invalidConfig(fmt::format("deviceID {} is not an SR-IOV VF (use mode host-device)",
                                         fn->address.str()));
      }
      d.pci = fn->address;
      d.pf = fn->pf;
      d.vf_index = fn->vf_index.value_or(-1);
      d.numa_node = fn->numa_node;
      RDMANET_ASSIGN_OR_RETURN(d.netdev, firstNetdev(deps.sysfs, *fn, "VF"));
      auto pf = readPciFunction(deps.sysfs, *fn->pf);
      if (!pf.ok()) return pf.error().context("PF of " + fn->address.str());
      RDMANET_ASSIGN_OR_RETURN(d.pf_netdev, firstNetdev(deps.sysfs, *pf, "PF"));
      if (d.vf_index < 0) {
        return makeError(ErrorCode::kDeviceNotFound,
                         fmt::format("VF {} has no virtfn link on its PF", fn->address.str()));
      }
      break;
    }
    case Mode::kMacvlan: {
      if (c.master.empty()) return invalidConfig("mode macvlan needs \"master\"");
      d.netdev = c.master;
      // The master's function, NUMA node (and, in plugin.cc, RDMA devices) only feed the
      // device-info file: without one, the sysfs walk is skipped (it is most of a macvlan
      // ADD's file I/O on a real PF).
      if (c.device_info_file.empty()) break;
      auto nd = readNetdev(deps.sysfs, c.master);
      if (nd.ok() && nd->pci) {
        d.pci = nd->pci;
        auto f = readPciFunction(deps.sysfs, *nd->pci);
        if (f.ok()) d.numa_node = f->numa_node;
      }
      break;
    }
    case Mode::kHostDevice: {
      if (!c.device.empty()) {
        d.netdev = c.device;
        auto nd = readNetdev(deps.sysfs, c.device);
        if (nd.ok() && nd->pci) d.pci = nd->pci;
      } else if (fn) {
        if (fn->isVf() && c.mode != Mode::kHostDevice) {
          return invalidConfig(
              fmt::format("deviceID {} is a VF: use mode sriov", fn->address.str()));
        }
        d.pci = fn->address;
        RDMANET_ASSIGN_OR_RETURN(d.netdev, firstNetdev(deps.sysfs, *fn, "device"));
      } else if (c.hwaddr) {
        RDMANET_ASSIGN_OR_RETURN(auto links, deps.host.links());
        for (const auto& l : links) {
          if (l.mac == *c.hwaddr) d.netdev = l.name;
        }
        if (d.netdev.empty()) {
          return makeError(ErrorCode::kDeviceNotFound,
                           fmt::format("no link with hwaddr {}", c.hwaddr->str()));
        }
      } else {
        return invalidConfig(
            "mode host-device needs \"device\", \"hwaddr\", \"pciBusID\" or \"deviceID\"");
      }
      if (d.pci) {
        auto f = readPciFunction(deps.sysfs, *d.pci);
        if (f.ok()) {
          d.numa_node = f->numa_node;
          d.pf = f->pf;  // a VF given whole: its device-info names the PF (pf-pci-address)
        }
      }
      break;
    }
  }
  return d;
}

std::unique_ptr<Attacher> makeAttacher(Mode mode) {
  switch (mode) {
    case Mode::kSriov:
      return makeSriovAttacher();
    case Mode::kMacvlan:
      return makeMacvlanAttacher();
    case Mode::kHostDevice:
      return makeHostDeviceAttacher();
  }
  return nullptr;
}

Status detach(PluginDeps& deps, const AttachmentState& st, const std::string& netns) {
  switch (st.mode) {
    case Mode::kSriov:
      return detachSriov(deps, st, netns);
    case Mode::kMacvlan:
      return detachMacvlan(deps, st, netns);
    case Mode::kHostDevice:
      return detachHostDevice(deps, st, netns);
  }
  return okStatus();
}

Result<bool> runInPodIfExists(PluginDeps& deps, const std::string& netns,
                              const NetnsRunner::Fn& fn) {
  if (netns.empty()) return false;
  const Status s = deps.runner.run(netns, fn);
  if (s.ok()) return true;
  // The namespace is gone (or the path no longer names one): the caller cleans up from the host.
  if (s.error().code == ErrorCode::kContainerUnknown || s.error().code == ErrorCode::kInvalidEnv) {
    return false;
  }
  return s.error();
}

}  // namespace rdmanet::cni
