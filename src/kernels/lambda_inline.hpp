// MPMG_LAMBDA_INLINE: a lambda's call operator always inlined (GCC and Clang take the attribute
// after the parameter list). The kernels' per-vector lambdas need it: GCC 12 compiled some of
// them out of line (the r = 1 Gauss-Seidel's setup and solve, the block kernels' accumulate
// step), passing what they capture by reference, and the scan's carry, through memory.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define MPMG_LAMBDA_INLINE __attribute__((always_inline))
#else
#define MPMG_LAMBDA_INLINE
#endif
