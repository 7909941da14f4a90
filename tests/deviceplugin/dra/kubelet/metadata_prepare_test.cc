// Device metadata through prepare and unprepare (deviceplugin/dra/kubelet/metadata_files.h): the
// file is written where the CDI mount a container gets reads it, with modes a container's user
// can read; unprepare, a restart's sweep and the restore after a reboot converge; a name unfit
// for a path is refused with nothing written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include "deviceplugin/dra/dra_device.h"
#include "deviceplugin/dra/kubelet/device_metadata.h"
#include "deviceplugin/dra/kubelet/prepare.h"
#include "tests/deviceplugin/dra/kubelet/cdi_runtime.h"
#include "tests/deviceplugin/dra/kubelet/in_memory_claims.h"
#include "tests/deviceplugin/test_node.h"
#include "tests/fakes/fake_clock.h"

namespace rdmanet::dp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using testing::InMemoryClaims;

constexpr const char* kDriver = "rdma.rdmanet.io";
constexpr const char* kUid = "6f1c0d2e-aa01";
const ClaimRef kRef{.ns = "team", .uid = kUid, .name = "nic-claim"};
constexpr const char* kContainerFile =
    "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/nic-claim/nic/"
    "rdma.rdmanet.io-metadata.json";

json claimDoc(const std::string& device, const json& annotations = json::object()) {
  json doc = testing::oneNicClaim("nic-claim", kUid, device);
  doc["metadata"]["annotations"] = annotations;
  return doc;
}

std::string readText(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

mode_t modeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// Every regular file under `dir`, relative to it.
std::set<std::string> filesUnder(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(dir, ec)) {
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  }
  return out;
}

class MetadataPrepareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceSnapshot inv{.pools = buildPools(defaultConfig(), node_.inventory())};
    inv.devices = nodeDevices(inv.pools);
    state_.publish(std::move(inv), stampVersion);
    preparer_ = makePreparer();
    ASSERT_TRUE(preparer_->start().ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<ClaimPreparer> makePreparer(bool metadata = true) {
    return std::make_unique<ClaimPreparer>(
        PreparerOptions{.driver = kDriver,
                        .node = "node-a",
                        .cdi_dir = cdi_,
                        .checkpoint = plugin_ / "checkpoint.json",
                        .metadata_dir = meta_,
                        .device_metadata = metadata,
                        .clock = &clock_},
        claims_, state_);
  }
  fs::path hostFile() const { return meta_ / kUid / "nic" / "metadata.json"; }
  // The first object of the stream in hostFile(), as a json.Decoder reads it.
  json firstObject() const {
    std::istringstream in(readText(hostFile()));
    json first;
    in >> first;
    return first;
  }
  // A reboot: the CDI dir (a tmpfs) and, here, the metadata file gone; the daemon started again
  // and, once it knows the devices, restoring the specs.
  std::unique_ptr<ClaimPreparer> rebootAndRestore() {
    fs::remove_all(cdi_);
    fs::remove(hostFile());
    auto again = makePreparer();
    EXPECT_TRUE(again->start().ok());
    again->restoreSpecs();
    return again;
  }
  fs::path specFile() const {
    return cdi_ / (std::string(kDriver) + "_metadata_" + kUid + "_nic.json");
  }

  testing::TestNode node_;
  const fs::path dir_ = testing::makeTempDir("dra-metadata");
  const fs::path cdi_ = dir_ / "cdi";
  const fs::path plugin_ = dir_ / "plugins" / kDriver;
  const fs::path meta_ = plugin_ / "dra-device-metadata";
  rdmanet::testing::FakeClock clock_;
  InMemoryClaims claims_{clock_};
  DeviceState state_;
  std::unique_ptr<ClaimPreparer> preparer_;
  const std::string dev_ = dra::pciDeviceName(node_.vf(0, 1));
};

TEST_F(MetadataPrepareTest, PrepareWritesTheFileAndTheContainerGetsItsMount) {
  claims_.claims["nic-claim"] = claimDoc(dev_);
  auto p = preparer_->prepare(kRef);
  ASSERT_TRUE(p.ok()) << p.error().msg;
  ASSERT_EQ(p->devices.size(), 1u);
  // The claim's own two CDI devices, then the metadata's.
  EXPECT_THAT(p->devices[0].cdi_device_ids,
              ::testing::ElementsAre(HasSubstr("rdmanet.io/rdma="), HasSubstr("rdmanet.io/rdma="),
                                     std::string(kDriver) + "/metadata=" + kUid + "_nic"));
  // What the runtime makes of the IDs: the mount, whose source is there.
  const auto view = testing::applyCdi(cdi_, p->devices[0].cdi_device_ids);
  EXPECT_TRUE(view.unresolved.empty());
  EXPECT_TRUE(view.missing_mount_sources.empty());
  EXPECT_TRUE(view.mounts.contains(kContainerFile));
  // The file names the VF's PCI address; a container's non-root user can read it.
  const json first = firstObject();
  EXPECT_EQ(first["apiVersion"], "metadata.resource.k8s.io/v1beta1");
  EXPECT_EQ(
      first["requests"][0]["devices"][0]["attributes"]["resource.kubernetes.io/pciBusID"]["string"],
      node_.vf(0, 1).str());
  EXPECT_EQ(modeOf(hostFile()), 0644u);
  EXPECT_EQ(modeOf(hostFile().parent_path()), 0755u);
  EXPECT_EQ(modeOf(meta_ / kUid), 0755u);
  EXPECT_EQ(modeOf(specFile()), 0600u);  // the runtime (root) reads specs
}

TEST_F(MetadataPrepareTest, AClaimFromATemplateIsMountedUnderItsPodClaimName) {
  claims_.claims["nic-claim"] = claimDoc(dev_, {{"resource.kubernetes.io/pod-claim-name", "rdma"}});
  auto p = preparer_->prepare(kRef);
  ASSERT_TRUE(p.ok()) << p.error().msg;
  const auto view = testing::applyCdi(cdi_, p->devices[0].cdi_device_ids);
  EXPECT_TRUE(view.mounts.contains(
      "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/rdma/nic/"
      "rdma.rdmanet.io-metadata.json"));
  // From the checkpoint after a restart: the same answer.
  auto again = makePreparer();
  ASSERT_TRUE(again->start().ok());
  auto q = again->prepare(kRef);
  ASSERT_TRUE(q.ok()) << q.error().msg;
  EXPECT_EQ(q->devices, p->devices);
  EXPECT_EQ(q->pod_claim_name, "rdma");
}

TEST_F(MetadataPrepareTest, UnprepareRemovesTheFileAndItsSpec) {
  claims_.claims["nic-claim"] = claimDoc(dev_);
  ASSERT_TRUE(preparer_->prepare(kRef).ok());
  ASSERT_TRUE(fs::exists(hostFile()));
  ASSERT_TRUE(preparer_->unprepare(kRef).ok());
  EXPECT_FALSE(fs::exists(meta_ / kUid));
  EXPECT_FALSE(fs::exists(specFile()));
  EXPECT_TRUE(filesUnder(cdi_).empty());
  EXPECT_TRUE(preparer_->unprepare(kRef).ok());  // idempotent
}

TEST_F(MetadataPrepareTest, TheFlagOffWritesNoneButAClaimPreparedWithItKeepsIt) {
  claims_.claims["nic-claim"] = claimDoc(dev_);
  ASSERT_TRUE(preparer_->prepare(kRef).ok());
  // Restarted with the flag off: the prepared claim's metadata is still restored and removed.
  auto off = makePreparer(/*metadata=*/false);
  ASSERT_TRUE(off->start().ok());
  fs::remove_all(cdi_);  // a reboot: /var/run/cdi is a tmpfs
  off->restoreSpecs();
  EXPECT_TRUE(fs::exists(specFile()));
  EXPECT_TRUE(fs::exists(hostFile()));
  ASSERT_TRUE(off->unprepare(kRef).ok());
  EXPECT_FALSE(fs::exists(meta_ / kUid));
  // A new prepare with it off: no metadata, no metadata CDI device.
  auto p = off->prepare(kRef);
  ASSERT_TRUE(p.ok()) << p.error().msg;
  EXPECT_EQ(p->devices[0].cdi_device_ids.size(), 2u);
  EXPECT_FALSE(p->device_metadata);
  EXPECT_FALSE(fs::exists(meta_ / kUid));
  EXPECT_FALSE(fs::exists(specFile()));
}

TEST_F(MetadataPrepareTest, AfterARebootTheSpecsAreWrittenAgainAndTheFileTooWhenGone) {
  claims_.claims["nic-claim"] = claimDoc(dev_);
  auto p = preparer_->prepare(kRef);
  ASSERT_TRUE(p.ok());
  const std::string content = readText(hostFile());
  auto again = rebootAndRestore();
  EXPECT_EQ(readText(hostFile()), content);
  const auto view = testing::applyCdi(cdi_, p->devices[0].cdi_device_ids);
  EXPECT_TRUE(view.unresolved.empty());
  EXPECT_TRUE(view.mounts.contains(kContainerFile));
  // Only the metadata spec gone: prepare's answer from the checkpoint writes it again.
  fs::remove(specFile());
  ASSERT_TRUE(again->prepare(kRef).ok());
  EXPECT_TRUE(fs::exists(specFile()));
}

TEST_F(MetadataPrepareTest, ASubrequestIsNamedInTheFileUnderItsRequestsPath) {
  json doc = claimDoc(dev_);
  doc["status"]["allocation"]["devices"]["results"][0]["request"] = "nic/fast";
  claims_.claims["nic-claim"] = doc;
  ASSERT_TRUE(preparer_->prepare(kRef).ok());
  const std::string content = readText(hostFile());
  EXPECT_EQ(firstObject()["requests"][0]["name"], "nic/fast");
  // Rendered again from the checkpoint after a reboot: the same file.
  rebootAndRestore();
  EXPECT_EQ(readText(hostFile()), content);
}

TEST_F(MetadataPrepareTest, TheStartUpSweepRemovesWhatNoPreparedClaimOwns) {
  claims_.claims["nic-claim"] = claimDoc(dev_);
  ASSERT_TRUE(preparer_->prepare(kRef).ok());
  // A crash between the metadata write and the checkpoint write of another claim left its
  // files, and a write cut short left a temp file in the prepared claim's directory.
  const fs::path orphan = meta_ / "dead-beef" / "nic";
  fs::create_directories(orphan);
  std::ofstream(orphan / "metadata.json") << "{}";
  std::ofstream(cdi_ / (std::string(kDriver) + "_metadata_dead-beef_nic.json")) << "{}";
  std::ofstream(hostFile().string() + ".rdmanet-tmp.1") << "{";
  // Not ours to judge: a name that is no claim UID.
  fs::create_directories(meta_ / "not_a_uid");
  auto again = makePreparer();
  ASSERT_TRUE(again->start().ok());
  EXPECT_EQ(filesUnder(meta_), (std::set<std::string>{std::string(kUid) + "/nic/metadata.json"}));
  EXPECT_FALSE(fs::exists(cdi_ / (std::string(kDriver) + "_metadata_dead-beef_nic.json")));
  EXPECT_TRUE(fs::exists(specFile()));
  EXPECT_TRUE(fs::exists(meta_ / "not_a_uid"));
}

TEST_F(MetadataPrepareTest, ABadPodClaimNameIsRefusedWithNothingWritten) {
  claims_.claims["nic-claim"] =
      claimDoc(dev_, {{"resource.kubernetes.io/pod-claim-name", "../../../etc"}});
  auto p = preparer_->prepare(kRef);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidConfig);
  EXPECT_THAT(p.error().msg, HasSubstr("pod claim name \"../../../etc\" is not a DNS label"));
  EXPECT_TRUE(filesUnder(cdi_).empty());
  EXPECT_TRUE(filesUnder(meta_).empty());
  EXPECT_EQ(preparer_->preparedCount(), 0u);
}

TEST_F(MetadataPrepareTest, ABadClaimOrRequestNameIsRefusedWithNothingWritten) {
  json bad_request = claimDoc(dev_);
  bad_request["status"]["allocation"]["devices"]["results"][0]["request"] = "../nic";
  claims_.claims["nic-claim"] = bad_request;
  EXPECT_FALSE(preparer_->prepare(kRef).ok());
  const ClaimRef bad_name{.ns = "team", .uid = kUid, .name = "../nic-claim"};
  claims_.claims["../nic-claim"] = claimDoc(dev_);
  auto p = preparer_->prepare(bad_name);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().code, ErrorCode::kInvalidConfig);
  EXPECT_TRUE(filesUnder(cdi_).empty());
  EXPECT_TRUE(filesUnder(meta_).empty());
  EXPECT_EQ(preparer_->preparedCount(), 0u);
}

TEST_F(MetadataPrepareTest, AFailedMetadataWriteLeavesNothing) {
  // The claim's directory cannot be made: a file is in its way.
  fs::create_directories(meta_);
  std::ofstream(meta_ / kUid) << "in the way";
  claims_.claims["nic-claim"] = claimDoc(dev_);
  auto p = preparer_->prepare(kRef);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.error().msg, HasSubstr("device metadata"));
  EXPECT_TRUE(filesUnder(cdi_).empty());
  EXPECT_EQ(preparer_->preparedCount(), 0u);
}

}  // namespace
}  // namespace rdmanet::dp
