#include "deviceplugin/doctor/report.h"

#include "common/base/enum_names.h"

namespace rdmanet::doctor {

int severity(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return 0;
    case Verdict::kUnknown:
      return 1;
    case Verdict::kWarn:
      return 2;
    case Verdict::kFail:
      return 3;
  }
  return 3;
}

std::string_view verdictName(Verdict v) {
  static constexpr EnumName<Verdict> kNames[] = {{"PASS", Verdict::kPass},
                                                 {"WARN", Verdict::kWarn},
                                                 {"FAIL", Verdict::kFail},
                                                 {"UNKNOWN", Verdict::kUnknown}};
  return nameOf<Verdict>(kNames, v, "UNKNOWN");
}

const std::string* CheckResult::value(std::string_view key) const {
  for (const auto& e : evidence) {
    if (e.key == key) return &e.value;
  }
  return nullptr;
}

std::string DistanceMatrix::at(std::string_view nic, std::string_view gpu) const {
  for (size_t i = 0; i < nics.size(); ++i) {
    if (nics[i].label != nic) continue;
    for (size_t j = 0; j < gpus.size(); ++j) {
      if (gpus[j].label == gpu) return std::string(distanceName(cells[i][j]));
    }
  }
  return "";
}

Verdict DoctorReport::worst() const {
  Verdict w = Verdict::kPass;
  for (const auto& r : results) {
    if (severity(r.verdict) > severity(w)) w = r.verdict;
  }
  return w;
}

int DoctorReport::exitCode() const {
  for (const auto& r : results) {
    if (r.verdict == Verdict::kFail) return 1;
  }
  return 0;
}

const CheckResult* DoctorReport::find(std::string_view check, std::string_view device) const {
  for (const auto& r : results) {
    if (r.check == check && r.device == device) return &r;
  }
  return nullptr;
}

std::vector<const CheckResult*> DoctorReport::all(std::string_view check) const {
  std::vector<const CheckResult*> out;
  for (const auto& r : results) {
    if (r.check == check) out.push_back(&r);
  }
  return out;
}

}  // namespace rdmanet::doctor
