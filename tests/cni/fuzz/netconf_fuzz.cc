// libFuzzer target over everything the CNI parses from untrusted input: the netconf (for every
// verb), CNI_ARGS, and results (prevResult, IPAM output) with their conversion to every
// version. Invariants: no crash, no exception; a netconf ADD accepts gives a state file that
// DEL can read back (cni/conf/limits.h); and a result that parses re-parses to the same value after
// conversion to 1.1.0.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cni/conf/env.h"
#include "cni/conf/json_util.h"
#include "cni/conf/netconf.h"
#include "cni/conf/result_types.h"
#include "cni/conf/version.h"
#include "cni/state/attachment_state.h"

using namespace rdmanet::cni;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)parseCniArgs(text);
  CniArgs args;
  args.mac = "02:00:00:00:00:01";
  for (Command c : {Command::kDel, Command::kCheck, Command::kGc, Command::kStatus}) {
    (void)parseNetConf(text, c, args);
  }
  if (auto conf = parseNetConf(text, Command::kAdd, args); conf.ok()) {
    CniEnv env;
    env.container_id = "c1";
    env.ifname = "net1";
    AttachmentState st = AttachmentState::forInvocation(env, *conf);
    if (auto prev = parseResult(conf->prev_result); prev.ok())
      st.result = resultToJson(*prev, "1.1.0");
    if (!parseJson(dumpJson(st.toJson()), kStateLimits).ok()) __builtin_trap();
  }
  auto doc = parseJson(text);
  if (!doc.ok()) return 0;
  const json* res = &*doc;
  if (doc->is_object() && doc->contains("prevResult")) res = &(*doc)["prevResult"];
  auto r = parseResult(*res);
  if (!r.ok()) return 0;
  for (const auto& v : supportedVersions()) (void)dumpJson(resultToJson(*r, v));
  auto again = parseResult(resultToJson(*r, "1.1.0"));
  if (!again.ok()) __builtin_trap();
  again->cni_version = r->cni_version;
  if (!(again->ips == r->ips) || !(again->routes == r->routes) || !(again->dns == r->dns)) {
    __builtin_trap();
  }
  return 0;
}
