#pragma once
// Starting from a prepared-claims checkpoint that cannot be trusted. A corrupt checkpoint used to
// stop the daemon at every start (the node's DRA driver gone until someone deleted the file by
// hand); starting empty instead would forget what earlier runs prepared, and so make kubelet's
// next prepare of those claims disagree with the containers already running. So, in order:
//   1. the file parses: use it;
//   2. it does not (or cannot be read): move it aside ("<file>.corrupt-<time>-<pid>", 0600, kept
//      for inspection) and restore the backup (the checkpoint as it was before its last
//      rewrite, claim_checkpoint.h), when that parses;
//   3. no good backup either (moved aside too when corrupt): start empty and rebuild from the API
//      server, from the claims allocated to this driver on this node (ClaimPreparer::
//      rebuildFromApi, which the DRA front runs once the devices are known).
// Each case leaves a note for /readyz and the log.

#include <string>

#include "common/base/result.h"
#include "deviceplugin/dra/kubelet/claim_checkpoint.h"

namespace rdmanet::dp {

struct CheckpointRecovery {
  enum class Source {
    kFile,    // read as it was
    kBackup,  // the file was corrupt; the backup was restored
    kApi,     // neither could be used: empty, to be rebuilt from the API server
  };
  Source source = Source::kFile;
  std::string note{};  // what happened, one line; "" for kFile
};

// Loads `cp` as above. Error 5 only when a corrupt file cannot be moved aside (it would be read
// again at the next start, so going on would hide it) or the good backup cannot be written as
// the checkpoint (nothing could be prepared then anyway).
Result<CheckpointRecovery> loadOrRecover(ClaimCheckpoint& cp);

}  // namespace rdmanet::dp
