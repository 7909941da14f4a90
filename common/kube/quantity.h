#pragma once
// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource.Quantity) as rdmanet
// writes them: counters and capacities in ResourceSlices.
//
// The API server stores a quantity in its canonical form: "100000M" comes back as "100G". A
// publisher that compares what it would write with what the server holds must write that form
// itself, or every comparison differs and the slices are rewritten forever.

#include <cstdint>
#include <string>

namespace rdmanet::kube {

// The canonical decimal-SI text of a whole number: the largest of "", k, M, G, T, P, E that
// leaves an integer mantissa (30'000'000'000 -> "30G", 1'500'000'000 -> "1500M", 0 -> "0").
// Negative values keep their sign ("-2k").
std::string decimalQuantity(int64_t value);

}  // namespace rdmanet::kube
