// Internal to why_explain*.cc: the `muster why` screen, split in two -
// why_explain.cc (the verdict and the screen's lines) and why_remedies.cc
// ("What would make it run:"). Declares the View both build from and the few
// helpers both use; include it nowhere else.
//
// Pure; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/cli/why_explain.h"
#include "cmd/cli/why_inputs.h"
#include "model/object_meta.h"
#include "model/resources.h"

namespace muster::cli::why_internal {

// What the screen is built from, derived once from the inputs.
struct View {
  const WhyInputs* in = nullptr;
  std::string subject;  // "job ml/train"
  const DebugGang* gang = nullptr;
  const DebugQueueShare* share = nullptr;
  const Condition* condition = nullptr;  // the PodGroup's condition muster wrote
  std::string reason;                    // why it waits: muster's last pass, else the condition
  std::string message;
  int32_t min_member = 0;
  int32_t members = 0;
  int32_t scheduled = 0;
  Resources per_member;  // the largest member's request, per resource
  Resources total;       // every member's
  std::string scarce;    // the resource the screen is about
  const DebugNode* largest_free = nullptr;
  const DebugNode* largest_allocatable = nullptr;
};

// The View of `in`; it points into `in`, which must outlive it.
View MakeView(const WhyInputs& in);

// "8 nvidia.com/gpu", "500m cpu", "2Gi memory".
std::string Amount(std::string_view resource, int64_t value);

// The refusal's message: the Job's status, else its newest Warning Event.
std::string RefusalOf(const View& v);

// "What would make it run:": the actions for `verdict`, one a line.
std::vector<std::string> Remedies(const View& v, WhyVerdict verdict);

}  // namespace muster::cli::why_internal
