// The OpenMP thread count of one library call: SolverOptions::threads while the call runs, then
// the caller's own setting again, so that mpmg does not change an application's thread count.
#pragma once

#include <omp.h>

namespace mpmg {

class ThreadScope {
public:
    /// threads > 0: OpenMP's thread count until destruction; 0: left as it is.
    explicit ThreadScope(int threads) : saved_(omp_get_max_threads()), set_(threads > 0) {
        if (set_) omp_set_num_threads(threads);
    }
    ~ThreadScope() {
        if (set_) omp_set_num_threads(saved_);
    }
    ThreadScope(const ThreadScope&) = delete;
    ThreadScope& operator=(const ThreadScope&) = delete;

private:
    int saved_;
    bool set_;
};

}  // namespace mpmg
