// torch::CoherencyEnforcer::Policy: what a tensor's accessors do on a
// potentially incoherent combination (SPEC §8, §11).
#pragma once

#include "neuroncustomop.h"

namespace at {

// The coherence policy of a tensor's accessors (values 0, 1, 2 as the
// runtime's CoherencePolicy).
struct CoherencyEnforcer {
    enum Policy : int {
        // Potentially incoherent accessor combinations are refused.
        COHERENT = COHERENCE_POLICY_COHERENT,
        // Admitted with a warning.
        INCOHERENT_VERBOSE = COHERENCE_POLICY_INCOHERENT_VERBOSE,
        // Admitted silently.
        INCOHERENT_QUIET = COHERENCE_POLICY_INCOHERENT_QUIET,
    };
};

}  // namespace at
