#include "mpmg/precision.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "mpmg/errors.hpp"

namespace mpmg {

std::string_view to_string(Precision p) {
    switch (p) {
        case Precision::fp64:
            return "fp64";
        case Precision::fp32:
            return "fp32";
        case Precision::fp16:
            return "fp16";
        case Precision::bf16:
            return "bf16";
    }
    return "?";
}

int bytes_of(Precision p) {
    switch (p) {
        case Precision::fp64:
            return 8;
        case Precision::fp32:
            return 4;
        case Precision::fp16:
        case Precision::bf16:
            return 2;
    }
    return 0;
}

std::string_view ginkgo_name(Precision p) {
    switch (p) {
        case Precision::fp64:
            return "DP";
        case Precision::fp32:
            return "SP";
        case Precision::fp16:
            return "HP";
        case Precision::bf16:
            return "BF";
    }
    return "?";
}

LevelPrecision PrecisionPlan::level(int l) const {
    const auto i = static_cast<std::size_t>(std::max(l, 0));
    LevelPrecision lp = levels[std::min(i, levels.size() - 1)];
    if (shift_level >= 0 && l >= shift_level) lp.storage = lp.compute;
    return lp;
}

Precision PrecisionPlan::direct_compute(int l) const {
    return automatic && l == 0 ? Precision::fp64 : level(l).compute;
}

namespace {

std::string_view k_digits(Precision p) {
    switch (p) {
        case Precision::fp64:
            return "64";
        case Precision::fp32:
            return "32";
        case Precision::fp16:
            return "16";
        case Precision::bf16:
            return "bf16";
    }
    return "?";
}

[[noreturn]] void bad_k_notation(std::string_view what, std::string_view text,
                                 std::string_view why) {
    throw InvalidInput(fmt::format(
        "{} '{}': {}; expected 'auto' or K<64|32>P<64|32>D<64|32|16|bf16>, e.g. K64P32D16", what,
        text, why));
}

}  // namespace

std::string PrecisionPlan::notation() const {
    std::string out;
    if (automatic) {
        out = "auto";
    } else {
        const bool uniform = std::all_of(levels.begin(), levels.end(),
                                         [&](const LevelPrecision& l) { return l == levels[0]; });
        if (uniform) {
            out = fmt::format("K{}P{}D{}", k_digits(krylov), k_digits(levels[0].compute),
                              k_digits(levels[0].storage));
        } else {
            std::string work, matrix;
            for (std::size_t i = 0; i < levels.size(); ++i) {
                if (i > 0) {
                    work += '-';
                    matrix += '-';
                }
                work += ginkgo_name(levels[i].compute);
                matrix += ginkgo_name(levels[i].storage);
            }
            out = fmt::format("work={} matrix={}", work, matrix);
        }
    }
    if (shift_level >= 0) out += fmt::format(" shift={}", shift_level);
    return out;
}

PrecisionPlan parse_precision(std::string_view text, std::string_view what) {
    PrecisionPlan plan;
    if (text == "auto") {
        plan.automatic = true;
        plan.levels = {LevelPrecision{Precision::fp32, Precision::fp16}};
        return plan;
    }
    std::size_t pos = 0;
    // Reads the letter `tag` followed by a precision token; `allowed` lists the valid tokens.
    auto read = [&](char tag, std::initializer_list<std::string_view> allowed) {
        if (pos >= text.size() || std::toupper(static_cast<unsigned char>(text[pos])) != tag) {
            bad_k_notation(what, text, fmt::format("missing '{}' part", tag));
        }
        ++pos;
        for (std::string_view tok : allowed) {
            if (text.substr(pos, tok.size()) == tok) {
                pos += tok.size();
                if (tok == "64") return Precision::fp64;
                if (tok == "32") return Precision::fp32;
                if (tok == "16") return Precision::fp16;
                return Precision::bf16;
            }
        }
        bad_k_notation(what, text, fmt::format("bad precision after '{}'", tag));
    };
    plan.krylov = read('K', {"64", "32"});
    const Precision p = read('P', {"64", "32"});
    const Precision d = read('D', {"64", "32", "16", "bf16"});
    if (pos != text.size()) bad_k_notation(what, text, "trailing characters");
    if (bytes_of(d) > bytes_of(p)) {
        bad_k_notation(what, text, "storage precision D must not be wider than compute P");
    }
    plan.levels = {LevelPrecision{p, d}};
    return plan;
}

namespace {

std::vector<Precision> parse_ginkgo_list(std::string_view text, std::string_view option) {
    std::vector<Precision> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t dash = std::min(text.find('-', start), text.size());
        std::string tok(text.substr(start, dash - start));
        std::transform(tok.begin(), tok.end(), tok.begin(),
                       [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
        if (tok == "DP") {
            out.push_back(Precision::fp64);
        } else if (tok == "SP") {
            out.push_back(Precision::fp32);
        } else if (tok == "HP") {
            out.push_back(Precision::fp16);
        } else if (tok == "BF") {
            out.push_back(Precision::bf16);
        } else {
            throw InvalidInput(fmt::format(
                "{} '{}': unknown entry '{}'; expected a '-'-separated list of DP, SP, HP, BF",
                option, text, tok));
        }
        start = dash + 1;
    }
    return out;
}

}  // namespace

PrecisionPlan parse_ginkgo_precision(std::string_view work, std::string_view matrix) {
    const auto w = parse_ginkgo_list(work, "--work");
    const auto m = matrix.empty() ? w : parse_ginkgo_list(matrix, "--matrix-precision");
    for (Precision p : w) {
        if (p == Precision::fp16 || p == Precision::bf16) {
            throw InvalidInput(
                fmt::format("--work '{}': working (compute) precision must be DP or SP", work));
        }
    }
    PrecisionPlan plan;
    plan.levels.clear();
    const std::size_t n = std::max(w.size(), m.size());
    for (std::size_t i = 0; i < n; ++i) {
        const Precision c = w[std::min(i, w.size() - 1)];
        const Precision s = m[std::min(i, m.size() - 1)];
        if (bytes_of(s) > bytes_of(c)) {
            throw InvalidInput(fmt::format(
                "--matrix-precision '{}': level {} stores in {} but computes in {}; storage "
                "must not be wider than the working precision",
                matrix, i, to_string(s), to_string(c)));
        }
        plan.levels.push_back(LevelPrecision{c, s});
    }
    return plan;
}

}  // namespace mpmg
