/* mpmg from C (include/mpmg/mpmg.h): the 7-point Poisson matrix on an n^3 grid, given once as a
 * stencil (the structured path) and once as CSR (the AMG path), each solved for two right-hand
 * sides on one setup. Exit code 0 when every solve converged with ||b - A x|| / ||b|| <= 1e-8.
 *
 * Usage: mpmg_example_c [N]   (default 24) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "mpmg/mpmg.h"

static int fail(const char* what, int status) {
    fprintf(stderr, "%s failed (status %d): %s\n", what, status, mpmg_last_error());
    return 1;
}

/* ||b - A x|| / ||b|| with A = the 7-point Poisson matrix (6 on the diagonal, -1 beside). */
static double residual(int n, const double* b, const double* x) {
    double r2 = 0.0, b2 = 0.0;
    for (int k = 0; k < n; ++k) {
        for (int j = 0; j < n; ++j) {
            for (int i = 0; i < n; ++i) {
                const int64_t c = i + (int64_t)n * (j + (int64_t)n * k);
                double ax = 6.0 * x[c];
                if (i > 0) ax -= x[c - 1];
                if (i < n - 1) ax -= x[c + 1];
                if (j > 0) ax -= x[c - n];
                if (j < n - 1) ax -= x[c + n];
                if (k > 0) ax -= x[c - (int64_t)n * n];
                if (k < n - 1) ax -= x[c + (int64_t)n * n];
                r2 += (b[c] - ax) * (b[c] - ax);
                b2 += b[c] * b[c];
            }
        }
    }
    return sqrt(r2 / b2);
}

/* Two right-hand sides on the solver's one setup, each from x = 0. */
static int solve_twice(mpmg_solver* s, int n, const char* path) {
    const int64_t cells = (int64_t)n * n * n;
    double* b = malloc(sizeof(double) * (size_t)cells);
    double* x = malloc(sizeof(double) * (size_t)cells);
    int bad = b == NULL || x == NULL;
    for (int rhs = 0; rhs < 2 && !bad; ++rhs) {
        for (int64_t c = 0; c < cells; ++c) {
            b[c] = rhs == 0 ? 1.0 : sin(0.01 * (double)c);
            x[c] = 0.0;
        }
        int iterations = 0;
        double rel = 0.0;
        const int status = mpmg_solver_solve(s, b, x, &iterations, &rel);
        if (status != MPMG_OK) {
            bad = fail("mpmg_solver_solve", status);
            break;
        }
        const double check = residual(n, b, x);
        printf("%s, right-hand side %d: %d iterations, relative residual %.2e (checked: %.2e)\n",
               path, rhs + 1, iterations, rel, check);
        bad = !(check <= 1e-8);
    }
    free(b);
    free(x);
    return bad;
}

int main(int argc, char** argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 24;
    if (n < 2 || n > 400) {
        fprintf(stderr, "usage: %s [N in 2..400]\n", argv[0]);
        return 2;
    }
    const int64_t cells = (int64_t)n * n * n;
    int bad = 0;
    /* Several setups and solves in this program: let them reuse each other's freed memory. */
    if (!mpmg_keep_freed_memory()) puts("freed memory is returned to the system");

    /* The structured path: 7 offsets, each with one value per cell. */
    mpmg_solver* s = NULL;
    int status = mpmg_solver_create("{\"precision\": \"K64P32D16\", \"rtol\": 1e-10}", &s);
    if (status != MPMG_OK) return fail("mpmg_solver_create", status);
    const int offsets[7 * 3] = {0, 0, -1, 0, -1, 0, -1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    double* values = malloc(sizeof(double) * 7 * (size_t)cells);
    if (values == NULL) return 1;
    for (int d = 0; d < 7; ++d) {
        for (int64_t c = 0; c < cells; ++c) values[d * cells + c] = d == 3 ? 6.0 : -1.0;
    }
    status = mpmg_solver_setup_stencil(s, n, n, n, 1, 7, offsets, values);
    free(values);
    if (status != MPMG_OK) return fail("mpmg_solver_setup_stencil", status);
    bad |= solve_twice(s, n, "stencil");
    mpmg_solver_destroy(s);

    /* The AMG path: the same matrix as CSR, columns increasing in each row. */
    int64_t* row_ptr = malloc(sizeof(int64_t) * (size_t)(cells + 1));
    int64_t* col = malloc(sizeof(int64_t) * 7 * (size_t)cells);
    double* val = malloc(sizeof(double) * 7 * (size_t)cells);
    if (row_ptr == NULL || col == NULL || val == NULL) return 1;
    int64_t nnz = 0;
    row_ptr[0] = 0;
    for (int64_t c = 0; c < cells; ++c) {
        const int i = (int)(c % n), j = (int)(c / n % n), k = (int)(c / ((int64_t)n * n));
        const int64_t nb[7] = {k > 0 ? c - (int64_t)n * n : -1,
                               j > 0 ? c - n : -1,
                               i > 0 ? c - 1 : -1,
                               c,
                               i < n - 1 ? c + 1 : -1,
                               j < n - 1 ? c + n : -1,
                               k < n - 1 ? c + (int64_t)n * n : -1};
        for (int e = 0; e < 7; ++e) {
            if (nb[e] < 0) continue;
            col[nnz] = nb[e];
            val[nnz] = nb[e] == c ? 6.0 : -1.0;
            ++nnz;
        }
        row_ptr[c + 1] = nnz;
    }
    status = mpmg_solver_create(NULL, &s);
    if (status != MPMG_OK) return fail("mpmg_solver_create", status);
    status = mpmg_solver_setup_csr(s, cells, row_ptr, col, val);
    free(row_ptr);
    free(col);
    free(val);
    if (status != MPMG_OK) return fail("mpmg_solver_setup_csr", status);
    bad |= solve_twice(s, n, "CSR");
    mpmg_solver_destroy(s);

    /* A mistake is a status and a message, not a crash. */
    status = mpmg_solver_create("{\"rtol\": 2}", &s);
    printf("bad options: status %d, \"%s\"\n", status, mpmg_last_error());
    bad |= status != MPMG_INVALID_INPUT || s != NULL;
    return bad;
}
