#include "common/json/json_dump.h"

namespace rdmanet {

std::string dumpJson(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace rdmanet
