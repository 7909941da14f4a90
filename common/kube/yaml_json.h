#pragma once
// YAML to JSON, for kubeconfig files (kubectl writes YAML; JSON is YAML too).
//
// Scalars become JSON strings, whatever they look like: kubeconfig fields are strings except a
// few booleans, which the caller reads by their text ("true"). Anchors and aliases are refused:
// kubectl never writes them, and aliases expand without bound. Only the first document is read.

#include <nlohmann/json.hpp>
#include <string>

#include "common/base/result.h"

namespace rdmanet::kube {

// Error 6 (with line and column) when the text is not YAML; 7 (with line and column) for an
// anchor or alias.
Result<nlohmann::json> yamlToJson(const std::string& text);

}  // namespace rdmanet::kube
