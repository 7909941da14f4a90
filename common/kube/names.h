#pragma once
// Kubernetes name formats (k8s.io/apimachinery/pkg/util/validation): used to validate names
// before they go into API paths and objects.

#include <string_view>

namespace rdmanet::kube {

// RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
bool isDnsLabel(std::string_view s);
// RFC 1123 subdomain: dot-separated labels, at most 253 characters (node and object names).
bool isDnsSubdomain(std::string_view s);
// A qualified name's name part, as a label value, a label key's name or a device-plugin resource
// name: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, 1 to 63 characters.
bool isQualifiedNamePart(std::string_view s);

}  // namespace rdmanet::kube
