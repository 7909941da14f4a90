#pragma once
// Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource.Quantity) as rdmanet
// writes them: counters and capacities in ResourceSlices.
//
// The API server stores a quantity in its canonical form: "100000M" comes back as "100G". A
// publisher that compares what it would write with what the server holds must write that form
// itself, or every comparison differs and the slices are rewritten forever.

#include <cstdint>
#include <string>
#include <string_view>

#include "common/base/result.h"

namespace rdmanet::kube {

// The canonical decimal-SI text of a whole number: the largest of "", k, M, G, T, P, E that
// leaves an integer mantissa (30'000'000'000 -> "30G", 1'500'000'000 -> "1500M", 0 -> "0").
// Negative values keep their sign ("-2k").
std::string decimalQuantity(int64_t value);

// The whole number a quantity stands for, as Quantity.Value() gives it: a sign, digits with an
// optional fraction, and one suffix: decimal SI (n u m "" k M G T P E), binary SI (Ki Mi Gi Ti Pi
// Ei) or a decimal exponent (e3, E-2, e+6). A fraction is rounded away from zero ("1.5" -> 2,
// "1m" -> 1, "-0.5" -> -1), as apimachinery rounds. Error 7 on anything else ("1K", "1 G", "",
// "e3") and on a value beyond int64 (the API server accepts those; nothing rdmanet reads is one).
// Exact for any number of digits: the arithmetic is on the decimal digits.
Result<int64_t> parseQuantity(std::string_view text);

}  // namespace rdmanet::kube
