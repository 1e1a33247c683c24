"""Tests of the Python interface (mpmg.py) against SciPy's direct solver and the C interface's
statuses. Run by ctest as python_interface (MPMG_LIBRARY set to the build's libmpmg.so)."""
import math
import unittest

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import mpmg


def poisson2d(n):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    i = sp.identity(n)
    return (sp.kron(i, t) + sp.kron(t, i)).tocsr()


def convection_diffusion(n, c):
    """5-point Laplacian plus first-order upwind convection c in x: nonsymmetric."""
    t = sp.diags([-1.0 - c, 2.0 + c, -1.0], [-1, 0, 1], shape=(n, n))
    s = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    i = sp.identity(n)
    return (sp.kron(i, t) + sp.kron(s, i)).tocsr()


def relative_residual(a, x, b):
    return np.linalg.norm(b - a @ x) / np.linalg.norm(b)


class SolveTest(unittest.TestCase):
    def test_matches_scipy_on_poisson(self):
        a = poisson2d(60)
        b = np.sin(0.05 * np.arange(a.shape[0]))
        x, info = mpmg.solve(a, b, rtol=1e-12)
        self.assertTrue(info["converged"], info["message"])
        self.assertGreater(info["iterations"], 1)
        self.assertEqual(info["status"], "converged")
        reference = spla.spsolve(a.tocsc(), b)
        self.assertLess(np.linalg.norm(x - reference) / np.linalg.norm(reference), 1e-9)
        self.assertLess(relative_residual(a, x, b), 1e-11)

    def test_nonsymmetric_takes_gmres(self):
        a = convection_diffusion(40, 5.0)
        b = np.ones(a.shape[0])
        x, info = mpmg.solve(a, b)
        self.assertTrue(info["converged"], info["message"])
        self.assertEqual(info["config"]["solver"], "gmres")
        self.assertLess(relative_residual(a, x, b), 1e-9)

    def test_any_sparse_format_and_the_callers_matrix_untouched(self):
        a = poisson2d(30)
        coo = a.tocoo()
        # Unsorted, with each entry split into two halves: summed before the setup.
        order = np.random.default_rng(1).permutation(coo.nnz)
        rows = np.concatenate([coo.row[order], coo.row[order]])
        cols = np.concatenate([coo.col[order], coo.col[order]])
        vals = np.concatenate([coo.data[order], coo.data[order]]) / 2.0
        messy = sp.csr_matrix((vals, (rows, cols)), shape=a.shape)
        messy.has_canonical_format = False
        messy_data = messy.data.copy()
        b = np.ones(a.shape[0])
        x_ref, _ = mpmg.solve(a, b)
        for m in (coo, a.tocsc(), messy, sp.lil_matrix(a)):
            with self.subTest(type(m).__name__):
                x, info = mpmg.solve(m, b)
                self.assertTrue(info["converged"])
                np.testing.assert_allclose(x, x_ref, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(messy.data, messy_data)

    def test_int64_and_int32_indices_give_the_same_solution(self):
        a = poisson2d(25)
        b = np.cos(0.1 * np.arange(a.shape[0]))
        x32, _ = mpmg.solve((a.indptr.astype(np.int32), a.indices.astype(np.int32), a.data), b)
        x64, _ = mpmg.solve((a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data), b)
        np.testing.assert_array_equal(x32, x64)

    def test_one_setup_many_solves_and_warm_starts(self):
        a = poisson2d(40)
        with mpmg.Solver(rtol=1e-10) as s:
            setup = s.setup(a)
            self.assertEqual(setup["rows"], a.shape[0])
            self.assertGreater(len(setup["hierarchy"]["levels"]), 1)
            self.assertEqual(s.rows, a.shape[0])
            for k in range(3):
                b = np.sin((k + 1) * 0.01 * np.arange(a.shape[0]))
                x, info = s.solve(b)
                self.assertTrue(info["converged"])
                self.assertLess(relative_residual(a, x, b), 1e-9)
            cold = info["iterations"]
            x2, warm = s.solve(b, x0=x)
            self.assertLess(warm["iterations"], cold)
            self.assertLess(relative_residual(a, x2, b), 1e-9)

    def test_stencil_input_matches_csr_on_the_grid(self):
        m = 12
        offsets = [(0, 0, 0), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)]
        values = np.full((7, m**3), -1.0)
        values[0] = 6.0
        t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
        i = sp.identity(m)
        a = (sp.kron(sp.kron(i, i), t) + sp.kron(sp.kron(i, t), i)
             + sp.kron(sp.kron(t, i), i)).tocsr()
        b = np.ones(m**3)
        s = mpmg.Solver()
        report = s.setup_stencil((m, m, m), offsets, values)
        self.assertEqual(report["hierarchy"]["levels"][0]["stencil"], "3d7")
        x, info = s.solve(b)
        self.assertTrue(info["converged"])
        self.assertLess(relative_residual(a, x, b), 1e-9)
        # The same matrix as CSR on the grid: the structured path too.
        g = mpmg.Solver(problem={"grid": [m, m, m]})
        g.setup(a)
        xg, _ = g.solve(b)
        np.testing.assert_allclose(xg, x, rtol=1e-12, atol=1e-14)
        # r x r blocks: two uncoupled copies of the same Poisson problem.
        blocks = np.zeros((7, m**3, 2, 2))
        blocks[:, :, 0, 0] = values
        blocks[:, :, 1, 1] = values
        s2 = mpmg.Solver()
        s2.setup_stencil((m, m, m), offsets, blocks)
        xb, info = s2.solve(np.repeat(b, 2))
        self.assertTrue(info["converged"])
        np.testing.assert_allclose(xb[0::2], x, rtol=1e-8)
        np.testing.assert_allclose(xb[1::2], x, rtol=1e-8)

    def test_not_converged_returns_the_last_iterate(self):
        a = poisson2d(40)
        b = np.ones(a.shape[0])
        x, info = mpmg.solve(a, b, max_iter=2, rtol=1e-14)
        self.assertFalse(info["converged"])
        self.assertEqual(info["status"], "max_iterations")
        self.assertEqual(info["iterations"], 2)
        self.assertTrue(np.all(np.isfinite(x)))
        self.assertLess(relative_residual(a, x, b), 1.0)

    def test_small_indefinite_matrix_is_solved_by_the_guard(self):
        a = (poisson2d(30) - 0.5 * sp.identity(900)).tocsr()  # Helmholtz: indefinite
        b = np.ones(900)
        x, info = mpmg.solve(a, b)
        self.assertTrue(info["converged"], info["message"])
        self.assertIn("factorised by LU", info["guard_events"][-1])
        self.assertLess(relative_residual(a, x, b), 1e-9)


def scipy_cg(a, b, m, rtol):
    """SciPy's CG with preconditioner m: (x, info, iterations); rtol is `tol` before SciPy 1.12."""
    count = [0]

    def callback(_):
        count[0] += 1

    try:
        x, info = spla.cg(a, b, rtol=rtol, atol=0.0, M=m, maxiter=500, callback=callback)
    except TypeError:
        x, info = spla.cg(a, b, tol=rtol, atol=0.0, M=m, maxiter=500, callback=callback)
    return x, info, count[0]


class PreconditionerTest(unittest.TestCase):
    def test_scipy_cg_with_the_hierarchy_takes_mpmgs_iterations(self):
        a = poisson2d(120)
        b = np.sin(0.01 * np.arange(a.shape[0])) + 1.0
        s = mpmg.Solver(multigrid={"cycle": "V"}, rtol=1e-8)
        s.setup(a)
        _, own = s.solve(b)
        self.assertTrue(own["converged"], own["message"])
        x, info, iterations = scipy_cg(a, b, s.aspreconditioner(), 1e-8)
        self.assertEqual(info, 0)
        self.assertLess(relative_residual(a, x, b), 1e-8)
        self.assertLessEqual(abs(iterations - own["iterations"]), 1, (iterations, own))
        _, _, plain = scipy_cg(a, b, None, 1e-8)
        self.assertGreater(plain, 3 * iterations)

    def test_apply_with_one_lu_level_is_the_inverse(self):
        a = convection_diffusion(15, 2.0)
        r = np.cos(0.2 * np.arange(a.shape[0]))
        for scale in (1.0, -1.0, 2.0 ** 90):
            s = mpmg.Solver(precision="K64P64D64",
                            multigrid={"max_levels": 1, "coarse_solver": "direct"})
            s.setup(scale * a)
            z = s.apply(r)
            self.assertLess(relative_residual(scale * a, z, r), 1e-12, scale)

    def test_apply_errors(self):
        s = mpmg.Solver()
        with self.assertRaises(mpmg.InvalidInput):
            s.apply(np.ones(4))
        with self.assertRaises(mpmg.InvalidInput):
            s.aspreconditioner()
        s.setup(poisson2d(10))
        with self.assertRaises(mpmg.InvalidInput) as ctx:
            s.apply(np.ones(99))
        self.assertIn("100 rows", str(ctx.exception))
        r = np.ones(100)
        r[4] = math.nan
        with self.assertRaises(mpmg.InvalidInput) as ctx:
            s.apply(r)
        self.assertIn("r[4] = nan", str(ctx.exception))


class UpdateValuesTest(unittest.TestCase):
    def test_new_values_on_the_pattern_solve_the_new_matrix(self):
        a = poisson2d(80)
        b = np.ones(a.shape[0])
        s = mpmg.Solver()
        first = s.setup(a)
        self.assertFalse(first["reused_aggregates"])
        heavier = (a + 0.5 * sp.identity(a.shape[0])).tocsr()  # same pattern: the diagonal
        info = s.update_values(heavier)
        self.assertTrue(info["reused_aggregates"])
        x, solved = s.solve(b)
        self.assertTrue(solved["converged"], solved["message"])
        self.assertLess(relative_residual(heavier, x, b), 1e-9)
        s.update_values(2.0 * a.data)  # the values alone, in the setup's CSR order
        x, solved = s.solve(b)
        self.assertTrue(solved["converged"], solved["message"])
        self.assertLess(relative_residual(2.0 * a, x, b), 1e-9)

    def test_update_errors(self):
        s = mpmg.Solver()
        with self.assertRaises(mpmg.InvalidInput):
            s.update_values(np.ones(3))
        a = poisson2d(10)
        s.setup(a)
        with self.assertRaises(mpmg.InvalidInput) as ctx:
            s.update_values(poisson2d(11))
        self.assertIn("pattern differs", str(ctx.exception))
        with self.assertRaises(mpmg.InvalidInput) as ctx:
            s.update_values(a.data[:-1])
        self.assertIn(f"{a.nnz - 1} values", str(ctx.exception))


class MemoryTest(unittest.TestCase):
    def test_keep_freed_memory_is_taken_by_glibc(self):
        self.assertIs(mpmg.keep_freed_memory(), True)
        x, info = mpmg.solve(poisson2d(20), np.ones(400))  # and solves go on as before
        self.assertTrue(info["converged"])


class ErrorTest(unittest.TestCase):
    def assert_raises_with(self, error, text, f, *args, **kwargs):
        with self.assertRaises(error) as ctx:
            f(*args, **kwargs)
        self.assertIn(text, str(ctx.exception))
        return ctx.exception

    def test_bad_options(self):
        e = self.assert_raises_with(mpmg.InvalidInput, "K99", mpmg.Solver, precision="K99")
        self.assertEqual(e.status, 2)
        self.assertIsInstance(e, ValueError)
        self.assert_raises_with(mpmg.InvalidInput, "rtol", mpmg.Solver, rtol="small")

    def test_bad_matrices(self):
        a = poisson2d(10)
        bad = a.copy()
        bad.data[5] = math.nan
        self.assert_raises_with(mpmg.InvalidInput, "A(1, 2) = nan", mpmg.Solver().setup, bad)
        self.assert_raises_with(mpmg.InvalidInput, "square", mpmg.Solver().setup,
                                sp.random(4, 5, density=0.5, format="csr"))
        self.assert_raises_with(mpmg.InvalidInput, "tuple", mpmg.Solver().setup, "A.mtx")
        unsorted = (np.array([0, 2]), np.array([1, 0]), np.array([1.0, 2.0]))
        self.assert_raises_with(mpmg.InvalidInput, "row 0", mpmg.Solver().setup, unsorted)

    def test_bad_vectors_and_order_of_calls(self):
        s = mpmg.Solver()
        self.assert_raises_with(mpmg.InvalidInput, "before", s.solve, np.ones(4))
        s.setup(poisson2d(10))
        self.assert_raises_with(mpmg.InvalidInput, "100 rows", s.solve, np.ones(99))
        self.assert_raises_with(mpmg.InvalidInput, "x0", s.solve, np.ones(100), np.ones(3))
        b = np.ones(100)
        b[7] = math.inf
        self.assert_raises_with(mpmg.InvalidInput, "7", s.solve, b)
        s.close()
        self.assert_raises_with(mpmg.InvalidInput, "closed", s.solve, np.ones(100))

    def test_a_failed_setup_keeps_the_previous_one(self):
        a = poisson2d(10)
        s = mpmg.Solver()
        s.setup(a)
        bad = a.copy()
        bad.data[0] = math.inf
        with self.assertRaises(mpmg.InvalidInput):
            s.setup(bad)
        x, info = s.solve(np.ones(100))
        self.assertTrue(info["converged"])
        self.assertLess(relative_residual(a, x, np.ones(100)), 1e-9)

    def test_stencil_shapes(self):
        s = mpmg.Solver()
        self.assert_raises_with(mpmg.InvalidInput, "offsets", s.setup_stencil, (2, 2, 2),
                                [(0, 0)], np.ones((1, 8)))
        self.assert_raises_with(mpmg.InvalidInput, "8 cells", s.setup_stencil, (2, 2, 2),
                                [(0, 0, 0)], np.ones((1, 7)))


if __name__ == "__main__":
    unittest.main()
