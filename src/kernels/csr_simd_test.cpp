// The CSR kernels on every Highway target this CPU supports and the build generated (AVX2, SSE4,
// EMU128/scalar, ...), each forced in turn with hwy::SetSupportedTargetsForTest, against the
// scalar FP64 reference (reference/csr_reference.hpp), for every supported (storage, compute)
// pair and all three column encodings (int32; per-row base + uint16 offsets; int64).
#include "kernels/csr_simd.hpp"

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/every_target_test_util.hpp"
#include "kernels/reference/csr_reference.hpp"

namespace mpmg {
namespace {

using kernels::csr::CsrOp;
using kernels::csr::CsrView;

enum class Encoding { col32, col16, col64 };
constexpr Encoding kEncodings[] = {Encoding::col32, Encoding::col16, Encoding::col64};

const char* name(Encoding e) {
    return e == Encoding::col32 ? "col32" : e == Encoding::col16 ? "col16" : "col64";
}

/// A random square CSR matrix in storage S, rows of lengths 0, 1, 2, ... up to `max_len`
/// (around the vector lengths and far beyond), columns sorted, diagonally dominant (diagonal
/// 1 + sum |off-diagonal|) so that Gauss-Seidel is a contraction.
template <class S>
struct TestCsr {
    std::int64_t n = 0;
    std::vector<std::int64_t> row_ptr{0};
    std::vector<std::int32_t> col32;
    std::vector<std::uint16_t> col16;
    std::vector<std::int32_t> base;
    std::vector<std::int64_t> col64;
    std::vector<S> val, inv_d;

    CsrView<S> view(Encoding e) const {
        CsrView<S> v;
        v.row_ptr = row_ptr.data();
        v.val = val.data();
        if (e == Encoding::col16) {
            v.col16 = col16.data();
            v.base = base.data();
        } else if (e == Encoding::col64) {
            v.col64 = col64.data();
        } else {
            v.col32 = col32.data();
        }
        return v;
    }
};

template <class S>
TestCsr<S> random_csr(std::int64_t n, int max_len, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
    TestCsr<S> t;
    t.n = n;
    for (std::int64_t i = 0; i < n; ++i) {
        const int len = static_cast<int>(i % (max_len + 1));
        std::set<std::int64_t> cols;
        if (len > 0) cols.insert(i);  // rows of length 0 have no diagonal (spmv/residual only)
        while (static_cast<int>(cols.size()) < std::min<std::int64_t>(len, n)) {
            cols.insert(pick(gen));
        }
        const std::int32_t b = cols.empty() ? 0 : static_cast<std::int32_t>(*cols.begin());
        t.base.push_back(b);
        double off = 0.0;
        for (const std::int64_t j : cols) {
            t.col32.push_back(static_cast<std::int32_t>(j));
            t.col16.push_back(static_cast<std::uint16_t>(j - b));
            t.col64.push_back(j);
            t.val.push_back(from_double<S>(j == i ? 0.0 : u(gen)));
            if (j != i) off += std::fabs(to_double(t.val.back()));
        }
        for (std::size_t k = static_cast<std::size_t>(t.row_ptr.back()); k < t.col32.size(); ++k) {
            if (t.col32[k] == i) t.val[k] = from_double<S>(1.0 + off);
        }
        t.inv_d.push_back(from_double<S>(1.0 / (1.0 + off)));
        t.row_ptr.push_back(static_cast<std::int64_t>(t.col32.size()));
    }
    return t;
}

template <class C>
std::vector<C> random_vector(std::int64_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<C> v(static_cast<std::size_t>(n));
    for (C& x : v) x = static_cast<C>(u(gen));
    return v;
}

template <class C>
std::vector<double> to_double_vector(const std::vector<C>& v) {
    return std::vector<double>(v.begin(), v.end());
}

/// |got - want| <= tol_i per row; the row bound is (row length + 3) eps_C (sum_j |a_ij x_j| +
/// |b_i| + |x_i|): the rounding of a dot product of that length in C, never a loose constant.
template <class S, class C>
void expect_rows_close(const TestCsr<S>& t, const std::vector<C>& got,
                       const std::vector<double>& want, const std::vector<double>& x,
                       const std::vector<double>& b, const char* what) {
    const double eps = std::numeric_limits<C>::epsilon();
    for (std::int64_t i = 0; i < t.n; ++i) {
        double mag =
            std::fabs(b[static_cast<std::size_t>(i)]) + std::fabs(x[static_cast<std::size_t>(i)]);
        for (std::int64_t p = t.row_ptr[i]; p < t.row_ptr[i + 1]; ++p) {
            mag += std::fabs(to_double(t.val[p]) * x[static_cast<std::size_t>(t.col32[p])]);
        }
        const double len = static_cast<double>(t.row_ptr[i + 1] - t.row_ptr[i]);
        ASSERT_NEAR(static_cast<double>(got[static_cast<std::size_t>(i)]),
                    want[static_cast<std::size_t>(i)], (len + 3.0) * eps * mag)
            << what << " row " << i;
    }
}

template <class S, class C>
void check_pair(unsigned seed) {
    struct Case {
        std::int64_t n;
        int max_len;
    };
    // Short rows around the vector lengths; long rows; a single row.
    for (const Case cs : {Case{40, 19}, Case{300, 70}, Case{1, 1}}) {
        const TestCsr<S> t = random_csr<S>(cs.n, cs.max_len, ++seed);
        const auto x = random_vector<C>(cs.n, ++seed);
        const auto b = random_vector<C>(cs.n, ++seed);
        const auto xd = to_double_vector(x), bd = to_double_vector(b);
        for (const Encoding e : kEncodings) {
            SCOPED_TRACE("n=" + std::to_string(cs.n) + " " + name(e));
            const CsrView<S> v = t.view(e);
            for (const CsrOp op : {CsrOp::spmv, CsrOp::residual, CsrOp::jacobi}) {
                std::vector<C> out(x.size(), C{0});
                std::vector<double> ref(x.size(), 0.0);
                kernels::csr::CsrApplyArgs<S, C> q;
                q.a = v;
                q.inv_d = t.inv_d.data();
                q.b = b.data();
                q.x = x.data();
                q.out = out.data();
                q.omega = static_cast<C>(0.8);
                q.op = op;
                // two calls on a split row range, as the threads of the caller do
                q.row_begin = 0;
                q.row_end = cs.n / 3;
                kernels::csr::apply(q);
                q.row_begin = q.row_end;
                q.row_end = cs.n;
                kernels::csr::apply(q);
                reference::csr_apply(v, op, t.inv_d.data(), bd.data(), xd.data(), ref.data(),
                                     static_cast<double>(q.omega), 0, cs.n);
                expect_rows_close(t, out, ref, xd, bd, "apply");
            }
            for (const bool forward : {true, false}) {
                for (const bool split : {false, true}) {
                    // split: rows [n/4, 3n/4) with the other columns from a frozen copy
                    const std::int64_t lo = split ? cs.n / 4 : 0, hi = split ? 3 * cs.n / 4 : cs.n;
                    const auto frozen = random_vector<C>(cs.n, seed + 100);
                    auto xs = x;
                    auto ref = xd;
                    const auto frozen_d = to_double_vector(frozen);
                    kernels::csr::CsrGsArgs<S, C> q;
                    q.a = v;
                    q.inv_d = t.inv_d.data();
                    q.b = b.data();
                    q.x = xs.data();
                    q.outside = split ? frozen.data() : xs.data();
                    q.row_begin = lo;
                    q.row_end = hi;
                    q.forward = forward;
                    kernels::csr::gs_sweep(q);
                    reference::csr_gs(v, t.inv_d.data(), bd.data(), ref.data(),
                                      split ? frozen_d.data() : ref.data(), lo, hi, forward);
                    // A contraction: rounding errors of earlier rows stay below the row bound
                    // times the row count.
                    const double eps = std::numeric_limits<C>::epsilon();
                    for (std::size_t i = 0; i < xs.size(); ++i) {
                        ASSERT_NEAR(static_cast<double>(xs[i]), ref[i],
                                    eps * 8.0 * static_cast<double>(cs.max_len + 3) *
                                        static_cast<double>(cs.n))
                            << "gs forward=" << forward << " split=" << split << " row " << i;
                    }
                }
            }
        }
    }
}

TEST(CsrSimd, EveryTargetMatchesReference) {
    testing::on_every_target([&](std::int64_t tgt) {
        ASSERT_STREQ(kernels::csr::target_name(), hwy::TargetName(tgt));
        check_pair<double, double>(1);
        check_pair<float, double>(20);
        check_pair<half, double>(40);
        check_pair<bfloat16, double>(60);
        check_pair<float, float>(80);
        check_pair<half, float>(100);
        check_pair<bfloat16, float>(120);
    });
}

/// FP16 Inf, NaN (quiet, signalling, payloads) and subnormals as the last entry of a row (the
/// scalar remainder after the full vectors on every target with more than one lane), rows of
/// subnormals, and Inf/NaN/subnormal inverse diagonals (converted per row), on every target:
/// the runtime guard relies on a non-finite value coming out non-finite, and Highway's own
/// emulation of the conversion (no F16C) turned them into finite values.
template <class C>
void check_fp16_special_values(unsigned seed) {
    TestCsr<half> t = random_csr<half>(40, 19, seed);  // row i has i % 20 entries
    const auto bits = [](std::uint16_t b) { return half{b}; };
    const auto last = [&](std::int64_t i) { return t.row_ptr[i + 1] - 1; };
    // Rows of 11 .. 19 entries: the last one is after one or two full vectors of 8 or 4.
    t.val[last(11)] = bits(0x7C00);  // +Inf
    t.val[last(13)] = bits(0xFC00);  // -Inf
    t.val[last(15)] = bits(0x7E01);  // quiet NaN with payload
    t.val[last(17)] = bits(0x7C01);  // signalling NaN
    t.val[last(19)] = bits(0xFFFF);  // negative NaN, all payload bits
    // Rows whose every entry is subnormal.
    for (const std::int64_t i : {12, 14, 33}) {
        const std::uint16_t sub[] = {0x03FF, 0x0001, 0x8200, 0x0155, 0x8001, 0x02AA, 0x0100};
        for (std::int64_t p = t.row_ptr[i]; p < t.row_ptr[i + 1]; ++p) t.val[p] = bits(sub[p % 7]);
    }
    // Inverse diagonals (Jacobi, Gauss-Seidel): Inf, NaN, subnormal.
    t.inv_d[31] = bits(0x7C00);
    t.inv_d[35] = bits(0x7E01);
    t.inv_d[16] = bits(0x0155);
    t.inv_d[18] = bits(0x83FF);
    const auto x = random_vector<C>(t.n, seed + 1);
    const auto b = random_vector<C>(t.n, seed + 2);
    const auto xd = to_double_vector(x), bd = to_double_vector(b);
    const double eps = std::numeric_limits<C>::epsilon();
    // The row bound of expect_rows_close, for rows whose reference is finite.
    const auto bound = [&](std::int64_t i) {
        double mag =
            std::fabs(bd[static_cast<std::size_t>(i)]) + std::fabs(xd[static_cast<std::size_t>(i)]);
        for (std::int64_t p = t.row_ptr[i]; p < t.row_ptr[i + 1]; ++p) {
            mag += std::fabs(to_double(t.val[p]) * xd[static_cast<std::size_t>(t.col32[p])]);
        }
        return static_cast<double>(t.row_ptr[i + 1] - t.row_ptr[i] + 3) * eps * mag;
    };
    for (const Encoding e : kEncodings) {
        SCOPED_TRACE(name(e));
        for (const CsrOp op : {CsrOp::spmv, CsrOp::jacobi}) {
            SCOPED_TRACE(op == CsrOp::spmv ? "spmv" : "jacobi");
            std::vector<C> out(x.size());
            std::vector<double> ref(x.size());
            kernels::csr::CsrApplyArgs<half, C> q;
            q.a = t.view(e);
            q.inv_d = t.inv_d.data();
            q.b = b.data();
            q.x = x.data();
            q.out = out.data();
            q.omega = static_cast<C>(0.8);
            q.op = op;
            q.row_end = t.n;
            kernels::csr::apply(q);
            reference::csr_apply(q.a, op, t.inv_d.data(), bd.data(), xd.data(), ref.data(),
                                 static_cast<double>(q.omega), 0, t.n);
            int non_finite = 0;
            for (std::int64_t i = 0; i < t.n; ++i) {
                const double got = static_cast<double>(out[static_cast<std::size_t>(i)]);
                const double want = ref[static_cast<std::size_t>(i)];
                if (std::isnan(want)) {
                    EXPECT_TRUE(std::isnan(got)) << "row " << i << ": " << got;
                } else if (std::isinf(want)) {
                    EXPECT_EQ(got, want) << "row " << i;
                } else {
                    EXPECT_NEAR(got, want, bound(i)) << "row " << i;
                    continue;
                }
                ++non_finite;
            }
            EXPECT_EQ(non_finite, op == CsrOp::spmv ? 5 : 7);
        }
        for (const bool forward : {true, false}) {
            SCOPED_TRACE(forward ? "gs forward" : "gs backward");
            auto xs = x;
            auto ref = xd;
            kernels::csr::CsrGsArgs<half, C> q;
            q.a = t.view(e);
            q.inv_d = t.inv_d.data();
            q.b = b.data();
            q.x = xs.data();
            q.outside = xs.data();
            q.row_end = t.n;
            q.forward = forward;
            kernels::csr::gs_sweep(q);
            reference::csr_gs(q.a, t.inv_d.data(), bd.data(), ref.data(), ref.data(), 0, t.n,
                              forward);
            // Non-finite values spread to the rows after them in the sweep: non-finite exactly
            // where the reference is, within the sweep bound of check_pair elsewhere.
            int non_finite = 0;
            for (std::size_t i = 0; i < xs.size(); ++i) {
                const double got = static_cast<double>(xs[i]);
                if (!std::isfinite(ref[i])) {
                    EXPECT_FALSE(std::isfinite(got)) << "row " << i << ": " << got;
                    ++non_finite;
                } else {
                    EXPECT_NEAR(got, ref[i], eps * 8.0 * (19 + 3) * 40) << "row " << i;
                }
            }
            EXPECT_GE(non_finite, 7);
        }
    }
}

TEST(CsrSimd, Fp16SpecialValuesOnEveryTarget) {
    testing::on_every_target([&](std::int64_t /*tgt*/) {
        check_fp16_special_values<float>(21);
        check_fp16_special_values<double>(22);
    });
}

/// A wrong column must be caught: the test's bound is not loose enough to hide it.
TEST(CsrSimd, ToleranceDetectsAWrongColumn) {
    TestCsr<double> t = random_csr<double>(40, 19, 3);
    const auto x = random_vector<double>(40, 4);
    std::vector<double> ok(40), bad(40);
    kernels::csr::CsrApplyArgs<double, double> q;
    q.a = t.view(Encoding::col32);
    q.x = x.data();
    q.out = ok.data();
    q.row_end = 40;
    kernels::csr::apply(q);
    std::swap(t.col32[t.row_ptr[5]], t.col32[t.row_ptr[5] + 1]);  // row 5 has 5 entries
    q.a = t.view(Encoding::col32);
    q.out = bad.data();
    kernels::csr::apply(q);
    EXPECT_GT(std::fabs(ok[5] - bad[5]), 1e-3);
}

}  // namespace
}  // namespace mpmg
