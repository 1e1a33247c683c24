#include "mpmg/options.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "mpmg/errors.hpp"

namespace mpmg {
namespace {

using json = nlohmann::json;

TEST(Options, JsonRoundTrip) {
    SolverOptions o;
    o.problem.name = "laplace27";
    o.problem.n = 48;
    o.multigrid.cycle = CycleKind::w;
    o.multigrid.smoother = SmootherKind::jacobi;
    o.multigrid.interpolation = InterpolationKind::operator_dependent;
    o.multigrid.aggregation = AggregationKind::smoothed;
    o.multigrid.reorder = ReorderKind::rcm;
    o.multigrid.row_weights = RowWeightsKind::none;
    o.multigrid.saddle_point = SaddlePointKind::block;
    o.multigrid.block_size = 3;
    o.multigrid.coarse_solver = CoarseSolverKind::smoother;
    o.multigrid.coarse_sweeps = 7;
    o.precision = parse_ginkgo_precision("DP-SP", "DP-SP-HP");
    o.precision.shift_level = 3;
    o.solver = SolverKind::gmres;
    const SolverOptions back = options_from_json(to_json(o));
    EXPECT_EQ(to_json(back), to_json(o));
    EXPECT_EQ(back.precision.level(2).storage, Precision::fp16);
    EXPECT_EQ(back.precision.level(3).storage, Precision::fp32);
    EXPECT_EQ(back.multigrid.cycle, CycleKind::w);
    EXPECT_EQ(back.multigrid.interpolation, InterpolationKind::operator_dependent);
    EXPECT_EQ(back.multigrid.aggregation, AggregationKind::smoothed);
    EXPECT_EQ(back.multigrid.reorder, ReorderKind::rcm);
    EXPECT_EQ(back.multigrid.row_weights, RowWeightsKind::none);
    EXPECT_EQ(back.multigrid.saddle_point, SaddlePointKind::block);
    EXPECT_EQ(back.multigrid.block_size, 3);
    EXPECT_EQ(to_json(SolverOptions{})["multigrid"]["block_size"], "auto");
    EXPECT_EQ(options_from_json(json::parse(R"({"multigrid": {"block_size": "auto"}})"))
                  .multigrid.block_size,
              0);
    EXPECT_EQ(back.multigrid.coarse_solver, CoarseSolverKind::smoother);
    EXPECT_EQ(back.multigrid.coarse_sweeps, 7);
}

TEST(Options, ConfigOverridesOnlyGivenKeys) {
    SolverOptions base;
    base.rtol = 1e-6;
    const SolverOptions o =
        options_from_json(json::parse(R"({"multigrid": {"cycle": "F"}})"), base);
    EXPECT_EQ(o.multigrid.cycle, CycleKind::f);
    EXPECT_EQ(o.rtol, 1e-6);
}

TEST(Options, UnknownKeysAndWrongTypesNameThePath) {
    const auto message = [](const char* text) {
        try {
            options_from_json(json::parse(text));
        } catch (const InvalidInput& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_NE(message(R"({"multigrid": {"smoothr": "symgs"}})").find("multigrid.smoothr"),
              std::string::npos);
    EXPECT_NE(message(R"({"rtol": "small"})").find("rtol"), std::string::npos);
    EXPECT_NE(message(R"({"multigrid": {"smoother": "magic"}})").find("symgs"), std::string::npos);
    EXPECT_NE(message(R"({"multigrid": {"interpolation": "cubic"}})").find("operator"),
              std::string::npos);
    EXPECT_NE(message(R"({"multigrid": {"aggregation": "rs"}})").find("smoothed"),
              std::string::npos);
    EXPECT_NE(message(R"({"precision": "K64P16D16"})").find("K64P16D16"), std::string::npos);
    EXPECT_NE(message(R"({"problem": {"grid": [1, 2]}})").find("problem.grid"), std::string::npos);
    EXPECT_NE(message(R"([1, 2])").find("object"), std::string::npos);
}

TEST(Options, ValidateRejectsContradictions) {
    SolverOptions o;
    EXPECT_THROW(validate(o), InvalidInput);  // nothing to solve
    o.problem.name = "laplace27";
    EXPECT_NO_THROW(validate(o));
    o.problem.matrix = "a.mtx";
    EXPECT_THROW(validate(o), InvalidInput);
    o.problem.matrix.clear();
    o.rtol = 0.0;
    EXPECT_THROW(validate(o), InvalidInput);
    o.rtol = 1e-8;
    o.multigrid.jacobi_weight = 1.5;
    EXPECT_THROW(validate(o), InvalidInput);
}

}  // namespace
}  // namespace mpmg
