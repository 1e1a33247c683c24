// Vector passes at a scaled level's interfaces (setup-then-scale, ICPP'24 §4.2), shared by the
// serial level (level.cpp) and the distributed one (distributed/dist_hierarchy.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "multigrid/level.hpp"

namespace mpmg::level_vectors {

/// v ⊙= w.
template <class C>
void multiply(std::vector<C>& v, const std::vector<C>& w) {
    const std::size_t n = v.size();
#pragma omp parallel for schedule(static) if (n > 32768)
    for (std::size_t i = 0; i < n; ++i) v[i] *= w[i];
}

/// f = r ⊙ inv_s (inv_s empty: unscaled, f = r), converted to C. Parallel like the level's
/// other vector passes: on one thread these two passes took about 5 % of a 2-thread FP16
/// V-cycle's samples (laplace27 n = 108, level 0).
template <class C, class T>
void load_scaled(const T* r, const std::vector<C>& inv_s, std::vector<C>& f) {
    const std::size_t n = f.size();
    if (inv_s.empty()) {
#pragma omp parallel for schedule(static) if (n > 32768)
        for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<C>(r[i]);
    } else {
#pragma omp parallel for schedule(static) if (n > 32768)
        for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<C>(r[i] * inv_s[i]);
    }
}

/// z = u ⊙ inv_s (inv_s empty: z = u), converted to T.
template <class C, class T>
void store_unscaled(const std::vector<C>& u, const std::vector<C>& inv_s, T* z) {
    const std::size_t n = u.size();
    if (inv_s.empty()) {
#pragma omp parallel for schedule(static) if (n > 32768)
        for (std::size_t i = 0; i < n; ++i) z[i] = static_cast<T>(u[i]);
    } else {
#pragma omp parallel for schedule(static) if (n > 32768)
        for (std::size_t i = 0; i < n; ++i) z[i] = static_cast<T>(u[i] * inv_s[i]);
    }
}

/// A level's right-hand side from an FP64 vector (in the level's compute precision).
inline void to_level(const std::vector<double>& v, Level& lev) {
    if (lev.compute() == Precision::fp64) {
        std::copy(v.begin(), v.end(), static_cast<double*>(lev.rhs_data()));
    } else {
        std::transform(v.begin(), v.end(), static_cast<float*>(lev.rhs_data()),
                       [](double x) { return static_cast<float>(x); });
    }
}

/// A level's solution as an FP64 vector.
inline void from_level(Level& lev, std::vector<double>& v) {
    const auto n = static_cast<std::size_t>(lev.rows());
    if (lev.compute() == Precision::fp64) {
        const auto* u = static_cast<const double*>(lev.solution_data());
        v.assign(u, u + n);
    } else {
        const auto* u = static_cast<const float*>(lev.solution_data());
        v.assign(u, u + n);
    }
}

}  // namespace mpmg::level_vectors
