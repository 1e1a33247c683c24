// MPMG_LAMBDA_INLINE: a lambda's call operator always inlined (GCC and Clang take the attribute
// after the parameter list). The kernels' per-vector lambdas need it: GCC 12 compiled some of
// them out of line (the r = 1 Gauss-Seidel's setup, solve, edge and scan lambdas, the block
// kernels' accumulate step), passing what they capture by reference, and the scan's carry,
// through memory. Not in the sanitizer builds, which check correctness, not speed: there the
// forced inlining more than doubled the compile of kernels/sgdia_block.cpp (557 s before it,
// still compiling after 22 minutes with it, the CI's ASan flags, one core each).
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MPMG_SANITIZED_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define MPMG_SANITIZED_BUILD 1
#endif

#if (defined(__GNUC__) || defined(__clang__)) && !defined(MPMG_SANITIZED_BUILD)
#define MPMG_LAMBDA_INLINE __attribute__((always_inline))
#else
#define MPMG_LAMBDA_INLINE
#endif
