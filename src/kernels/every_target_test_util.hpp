// Runs a kernel test once per Highway target that this CPU supports and the build generated
// (AVX2, SSE4, EMU128, ...), each forced with hwy::SetSupportedTargetsForTest, so the
// fallbacks are tested too; the target's name is in the failure trace.
#pragma once

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cstdint>
#include <vector>

namespace mpmg::testing {

/// Calls f(target) with each target forced in turn; stops at the first fatal failure and
/// restores the normal dispatch afterwards.
template <class F>
void on_every_target(F&& f) {
    struct Restore {
        ~Restore() { hwy::SetSupportedTargetsForTest(0); }
    } restore;
    const std::vector<std::int64_t> targets = hwy::SupportedAndGeneratedTargets();
    ASSERT_FALSE(targets.empty());
    for (const std::int64_t t : targets) {
        hwy::SetSupportedTargetsForTest(t);
        SCOPED_TRACE(hwy::TargetName(t));
        f(t);
        if (::testing::Test::HasFatalFailure()) return;
    }
}

}  // namespace mpmg::testing
