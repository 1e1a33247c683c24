#include "unstructured/saddle_point.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <limits>
#include <type_traits>

#include "mpmg/errors.hpp"
#include "unstructured/spgemm.hpp"

namespace mpmg {
namespace {

/// Vectors longer than this are gathered and scattered by all threads.
constexpr std::int64_t kParallelRows = 50000;

/// The rows `rows` of `k`, their columns in `cols` only, renumbered by `at` (at[j]: j's place
/// in `cols`, -1 when j is not in it). The columns stay ascending (the renumbering keeps their
/// order).
CsrMatrix block_of(const CsrMatrix& k, const std::vector<std::int64_t>& rows,
                   const std::vector<std::int64_t>& at, std::int64_t cols) {
    CsrMatrix m;
    m.rows = static_cast<std::int64_t>(rows.size());
    m.cols = cols;
    m.row_ptr.assign(rows.size() + 1, 0);
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const auto i = static_cast<std::size_t>(rows[r]);
        for (std::int64_t q = k.row_ptr[i]; q < k.row_ptr[i + 1]; ++q) {
            if (at[static_cast<std::size_t>(k.col[static_cast<std::size_t>(q)])] >= 0) {
                m.col.push_back(at[static_cast<std::size_t>(k.col[static_cast<std::size_t>(q)])]);
                m.val.push_back(k.val[static_cast<std::size_t>(q)]);
            }
        }
        m.row_ptr[r + 1] = static_cast<std::int64_t>(m.col.size());
    }
    return m;
}

/// x - y, both with ascending columns in every row; entries that cancel to 0 are kept.
CsrMatrix difference(const CsrMatrix& x, const CsrMatrix& y) {
    CsrMatrix d;
    d.rows = x.rows;
    d.cols = x.cols;
    d.row_ptr.assign(static_cast<std::size_t>(x.rows) + 1, 0);
    for (std::size_t i = 0; i < static_cast<std::size_t>(x.rows); ++i) {
        std::int64_t a = x.row_ptr[i], b = y.row_ptr[i];
        const std::int64_t ae = x.row_ptr[i + 1], be = y.row_ptr[i + 1];
        while (a < ae || b < be) {
            const std::int64_t ca = a < ae ? x.col[static_cast<std::size_t>(a)]
                                           : std::numeric_limits<std::int64_t>::max();
            const std::int64_t cb = b < be ? y.col[static_cast<std::size_t>(b)]
                                           : std::numeric_limits<std::int64_t>::max();
            const std::int64_t c = std::min(ca, cb);
            double v = 0.0;
            if (ca == c) v += x.val[static_cast<std::size_t>(a++)];
            if (cb == c) v -= y.val[static_cast<std::size_t>(b++)];
            d.col.push_back(c);
            d.val.push_back(v);
        }
        d.row_ptr[i + 1] = static_cast<std::int64_t>(d.col.size());
    }
    return d;
}

/// The hierarchy of one block; its failure names the block.
std::unique_ptr<AmgHierarchy> hierarchy_of(const CsrMatrix& m, const MultigridOptions& mg,
                                           const PrecisionPlan& plan, const AmgSettings& settings,
                                           const char* block) {
    try {
        return std::make_unique<AmgHierarchy>(m, mg, plan, settings);
    } catch (const NumericalError& e) {
        throw NumericalError(fmt::format("saddle point, {}: {}", block, e.what()));
    }
}

/// Sum over the levels of `levels`' `field`.
template <class F>
double total(const std::vector<LevelReport>& levels, F field) {
    double s = 0.0;
    for (const LevelReport& l : levels) s += static_cast<double>(field(l));
    return s;
}

}  // namespace

std::optional<SaddleSplit> saddle_split(const CsrMatrix& a) {
    if (a.rows != a.cols || a.rows < 2) return std::nullopt;
    const auto n = static_cast<std::size_t>(a.rows);
    std::vector<char> zero(n, 1);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::int64_t q = a.row_ptr[i]; q < a.row_ptr[i + 1]; ++q) {
            if (a.col[static_cast<std::size_t>(q)] == static_cast<std::int64_t>(i) &&
                a.val[static_cast<std::size_t>(q)] != 0.0) {
                zero[i] = 0;
            }
        }
    }
    SaddleSplit s;
    for (std::size_t i = 0; i < n; ++i) {
        (zero[i] != 0 ? s.p : s.u).push_back(static_cast<std::int64_t>(i));
    }
    if (s.p.empty() || s.p.size() > s.u.size()) return std::nullopt;
    for (const std::int64_t i : s.p) {
        int coupled = 0;
        for (std::int64_t q = a.row_ptr[static_cast<std::size_t>(i)];
             q < a.row_ptr[static_cast<std::size_t>(i) + 1]; ++q) {
            coupled += zero[static_cast<std::size_t>(a.col[static_cast<std::size_t>(q)])] == 0 &&
                       a.val[static_cast<std::size_t>(q)] != 0.0;
        }
        if (coupled == 0) return std::nullopt;
        s.pins += coupled == 1;
    }
    return s;
}

SaddlePointPreconditioner::SaddlePointPreconditioner(const CsrMatrix& k, const SaddleSplit& split,
                                                     const MultigridOptions& mg,
                                                     const PrecisionPlan& plan,
                                                     const AmgSettings& settings)
    : split_(split) {
    const auto n = static_cast<std::size_t>(k.rows);
    std::vector<std::int64_t> at_u(n, -1), at_p(n, -1);
    for (std::size_t r = 0; r < split_.u.size(); ++r) {
        at_u[static_cast<std::size_t>(split_.u[r])] = static_cast<std::int64_t>(r);
    }
    for (std::size_t r = 0; r < split_.p.size(); ++r) {
        at_p[static_cast<std::size_t>(split_.p[r])] = static_cast<std::int64_t>(r);
    }
    const auto nu = static_cast<std::int64_t>(split_.u.size());
    const auto np = static_cast<std::int64_t>(split_.p.size());
    a_ = block_of(k, split_.u, at_u, nu);
    e_ = block_of(k, split_.u, at_p, np);
    CsrMatrix b = block_of(k, split_.p, at_u, nu);
    const CsrMatrix c = block_of(k, split_.p, at_p, np);
    // S^ = (B diag(A)^-1) E - C.
    const std::vector<double> d = diagonal_of(a_);
    for (std::size_t q = 0; q < b.val.size(); ++q) {
        b.val[q] /= d[static_cast<std::size_t>(b.col[q])];
    }
    schur_ = difference(spgemm(b, e_), c);
    b = CsrMatrix();
    // Both blocks are scalar: nodes of K (--block-size) are not nodes of A or S^.
    MultigridOptions block_mg = mg;
    block_mg.block_size = 1;
    AmgSettings sa = settings;  // A of an exactly symmetric K is exactly symmetric
    sa.aggregates = nullptr;    // kept aggregates are K's, not a block's
    AmgSettings ss = sa;
    ss.exactly_symmetric = false;  // measured where it matters
    ha_ = hierarchy_of(a_, block_mg, plan, sa, "block A (rows with a nonzero diagonal)");
    hs_ = hierarchy_of(schur_, block_mg, plan, ss,
                       "block S = B diag(A)^-1 E - C (rows with a zero diagonal)");
    for (LevelReport l : ha_->report()) {
        l.note = l.note.empty() ? "block A" : fmt::format("block A; {}", l.note);
        report_.push_back(std::move(l));
    }
    for (LevelReport l : hs_->report()) {
        l.note = l.note.empty() ? "block S" : fmt::format("block S; {}", l.note);
        report_.push_back(std::move(l));
    }
    const double rows0 = static_cast<double>(a_.rows + schur_.rows);
    const double nnz0 = static_cast<double>(a_.nnz() + schur_.nnz());
    grid_complexity_ = total(report_, [](const LevelReport& l) { return l.rows; }) / rows0;
    operator_complexity_ = total(report_, [](const LevelReport& l) { return l.nnz; }) / nnz0;
}

template <class K>
void SaddlePointPreconditioner::apply(const K* r, K* z) {
    std::vector<K>* wu;
    std::vector<K>* wp;
    if constexpr (std::is_same_v<K, double>) {
        wu = du_;
        wp = dp_;
    } else {
        wu = fu_;
        wp = fp_;
    }
    const auto nu = static_cast<std::int64_t>(split_.u.size());
    const auto np = static_cast<std::int64_t>(split_.p.size());
    for (int i = 0; i < 3; ++i) wu[i].resize(static_cast<std::size_t>(nu));
    for (int i = 0; i < 2; ++i) wp[i].resize(static_cast<std::size_t>(np));
    K* ru = wu[0].data();
    K* t = wu[1].data();
    K* zu = wu[2].data();
    K* rp = wp[0].data();
    K* zp = wp[1].data();
    const std::int64_t* u = split_.u.data();
    const std::int64_t* p = split_.p.data();
#pragma omp parallel for if (nu > kParallelRows)
    for (std::int64_t i = 0; i < nu; ++i) ru[i] = r[u[i]];
#pragma omp parallel for if (np > kParallelRows)
    for (std::int64_t i = 0; i < np; ++i) rp[i] = r[p[i]];
    // z_p = -S^-1 r_p.
    hs_->apply(rp, zp);
#pragma omp parallel for if (np > kParallelRows)
    for (std::int64_t i = 0; i < np; ++i) zp[i] = -zp[i];
    // z_u = A^-1 (r_u - E z_p), the product summed in double.
    const std::int64_t* ptr = e_.row_ptr.data();
    const std::int64_t* col = e_.col.data();
    const double* val = e_.val.data();
#pragma omp parallel for if (nu > kParallelRows)
    for (std::int64_t i = 0; i < nu; ++i) {
        double s = static_cast<double>(ru[i]);
        for (std::int64_t q = ptr[i]; q < ptr[i + 1]; ++q) {
            s -= val[q] * static_cast<double>(zp[col[q]]);
        }
        t[i] = static_cast<K>(s);
    }
    ha_->apply(t, zu);
#pragma omp parallel for if (nu > kParallelRows)
    for (std::int64_t i = 0; i < nu; ++i) z[u[i]] = zu[i];
#pragma omp parallel for if (np > kParallelRows)
    for (std::int64_t i = 0; i < np; ++i) z[p[i]] = zp[i];
}

template void SaddlePointPreconditioner::apply<double>(const double*, double*);
template void SaddlePointPreconditioner::apply<float>(const float*, float*);

}  // namespace mpmg
