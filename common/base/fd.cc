#include "common/base/fd.h"

#include <unistd.h>

namespace rdmanet {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int Fd::release() {
  int f = fd_;
  fd_ = -1;
  return f;
}

}  // namespace rdmanet
