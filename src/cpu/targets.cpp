// The target the CPU kernels run on, asked the way the kernels are chosen: a function compiled for
// every target (the same set, cpu/simd_targets.h) and dispatched like them.
#include "cpu/simd_targets.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/targets.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep

#include <hwy/highway.h>
#include <hwy/targets.h>

HWY_BEFORE_NAMESPACE();
namespace tropical::cpu::HWY_NAMESPACE {

const char* ThisTarget() { return hwy::TargetName(HWY_TARGET); }

}  // namespace tropical::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <mutex>

#include "cpu/targets.hpp"

namespace tropical::cpu {
namespace {

std::mutex g_forcing;

// What the CPU runs, before any forcing (SetSupportedTargetsForTest changes SupportedTargets()).
std::int64_t real_targets() {
    static const std::int64_t targets = hwy::SupportedTargets();
    return targets;
}

}  // namespace

HWY_EXPORT(ThisTarget);

const char* target_name() { return HWY_DYNAMIC_DISPATCH(ThisTarget)(); }

const char* target_name(std::int64_t target) { return hwy::TargetName(target); }

std::vector<std::int64_t> runnable_targets() {
    std::lock_guard<std::mutex> lock(g_forcing);
    std::vector<std::int64_t> out;
    // Lower bits are better targets.
    for (std::int64_t left = real_targets() & HWY_TARGETS; left != 0; left &= left - 1) out.push_back(left & -left);
    return out;
}

void force_target(std::int64_t target) {
    std::lock_guard<std::mutex> lock(g_forcing);
    real_targets();  // remembered before the first forcing
    hwy::SetSupportedTargetsForTest(target);
    hwy::GetChosenTarget().Update(hwy::SupportedTargets());
}

}  // namespace tropical::cpu
#endif
