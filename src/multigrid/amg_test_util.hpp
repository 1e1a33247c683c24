// AMG-preconditioned Krylov solves for the AMG tests (the adapters the API wires the same way).
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "krylov/krylov.hpp"
#include "mpmg/csr_matrix.hpp"
#include "multigrid/amg_hierarchy.hpp"

namespace mpmg::amg_test {

class CsrOperator final : public LinearOperator<double> {
public:
    explicit CsrOperator(const CsrMatrix& a) : a_(a) {}
    std::int64_t size() const override { return a_.rows; }
    void apply(const double* x, double* y) const override { a_.multiply(x, y); }

private:
    const CsrMatrix& a_;
};

class AmgPreconditioner final : public Preconditioner<double> {
public:
    explicit AmgPreconditioner(AmgHierarchy& h) : h_(h) {}
    void apply(const double* r, double* z) override { h_.apply(r, z); }

private:
    AmgHierarchy& h_;
};

struct Run {
    KrylovResult result;
    bool finite = true;  ///< every entry of x finite
    int levels = 0;
    std::string notes;  ///< the levels' notes, for failure messages
};

/// Solves A x = A 1 from x = 0 with CG (or GMRES) preconditioned by one AMG cycle.
inline Run solve(const CsrMatrix& a, const PrecisionPlan& plan, const MultigridOptions& mg,
                 bool gmres_solver, double rtol = 1e-8, int max_iter = 500,
                 const AmgSettings& settings = {}) {
    AmgHierarchy h(a, mg, plan, settings);
    std::vector<double> ones(static_cast<std::size_t>(a.rows), 1.0), b(ones.size()),
        x(ones.size(), 0.0);
    a.multiply(ones.data(), b.data());
    CsrOperator op(a);
    AmgPreconditioner m(h);
    KrylovOptions opt;
    opt.rtol = rtol;
    opt.max_iter = max_iter;
    Run run;
    run.result = gmres_solver ? gmres<double>(op, &m, b.data(), x.data(), opt)
                              : cg<double>(op, &m, b.data(), x.data(), opt);
    for (double v : x) run.finite = run.finite && std::isfinite(v);
    run.levels = h.num_levels();
    for (const auto& r : h.report()) {
        run.notes += fmt::format("[{} {}/{} {}] ", r.rows, to_string(r.storage),
                                 to_string(r.compute), r.note);
    }
    return run;
}

}  // namespace mpmg::amg_test
