#pragma once
// Calling a kubelet gRPC service on its unix socket, as the daemon does (the device-plugin
// Registration, pod-resources' List): a fresh channel per call, a deadline on every call, and a
// failure read as "kubelet is not there" (try again later) or as an answer.

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "common/base/result.h"

namespace rdmanet::dp {

// A channel to `socket`, made for one call: after a kubelet restart an old channel would keep
// reconnecting with backoff to a socket inode that no longer exists. When there is no file at
// `socket` (kubelet is not there), error 11 (try again later) with the message `absent`.
Result<std::shared_ptr<grpc::Channel>> kubeletChannel(const std::filesystem::path& socket,
                                                      std::string absent);

// Sets `ctx`'s deadline `timeout` from now.
void setDeadlineIn(grpc::ClientContext& ctx, std::chrono::milliseconds timeout);

// A failed call that kubelet did not answer: it is not (yet) listening or did not answer in time.
bool kubeletUnreachable(const grpc::Status& st);

}  // namespace rdmanet::dp
