"""Tests of the Python interface under mpirun, with mpi4py starting MPI: a Solver of a
communicator on each process's rows (setup_rows) and boxes (setup_box), and MPI.COMM_SELF's
serial Solver on every process. Run by ctest as python_interface_mpi_np2 and _np3
(MPMG_LIBRARY set to the build's libmpmg.so)."""
import unittest

import numpy as np
import scipy.sparse as sp
from mpi4py import MPI

import mpmg


def poisson3d(n):
    """The 7-point Poisson matrix on n^3 cells, cell (i, j, k) = i + n (j + n k)."""
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    i = sp.identity(n)
    return (sp.kron(sp.kron(i, i), t) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(t, i), i)).tocsr()


def relative_residual(a, x, b):
    return np.linalg.norm(b - a @ x) / np.linalg.norm(b)


class DistributedTest(unittest.TestCase):
    def setUp(self):
        self.comm = MPI.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()

    def test_rows_solve_their_system(self):
        n = 14
        a = poisson3d(n)
        rows = a.shape[0]
        first = rows * self.rank // self.size
        end = rows * (self.rank + 1) // self.size
        b = np.linspace(1.0, 2.0, rows)
        solver = mpmg.Solver(comm=self.comm, rtol=1e-10)
        report = solver.setup_rows(first, rows, a[first:end])
        self.assertEqual(report["partition"]["ranks"], self.size)
        self.assertEqual(solver.rows, end - first)
        x_mine, info = solver.solve(b[first:end])
        self.assertTrue(info["converged"], info["message"])
        x = np.concatenate(self.comm.allgather(x_mine))
        self.assertLess(relative_residual(a, x, b), 1e-8)
        # One cycle from zero: a fixed operator.
        self.assertTrue(np.array_equal(solver.apply(b[first:end]), solver.apply(b[first:end])))
        # Another process's count of rows: every process raises the same error.
        with self.assertRaises(mpmg.InvalidInput) as e:
            wrong = end - 1 if self.rank == 0 else end
            solver.setup_rows(first, rows, a[first:wrong])
        self.assertIn("the blocks must follow each other in rank order", str(e.exception))

    def test_boxes_solve_their_system(self):
        nx, ny = 8, 6
        nz = 3 * self.size
        cells = nx * ny * nz
        offsets = [(0, 0, 0), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)]
        z0 = 3 * self.rank
        box = (nx, ny, 3)
        box_cells = nx * ny * 3
        values = np.full((len(offsets), box_cells), -1.0)
        values[0, :] = 6.0
        solver = mpmg.Solver(comm=self.comm, rtol=1e-10)
        report = solver.setup_box((0, 0, z0), (nx, ny, nz), box, offsets, values)
        self.assertEqual(report["partition"]["ranks"], self.size)
        self.assertEqual(solver.rows, box_cells)
        b = np.linspace(1.0, 2.0, cells)
        mine = slice(z0 * nx * ny, (z0 + 3) * nx * ny)  # whole z-planes: contiguous
        x_mine, info = solver.solve(b[mine])
        self.assertTrue(info["converged"], info["message"])
        x = np.concatenate(self.comm.allgather(x_mine))
        # The same operator whole: 6 on the diagonal, -1 to each neighbour inside the grid.
        tx = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(nx, nx))
        ty = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(ny, ny))
        tz = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(nz, nz))
        ix, iy, iz = sp.identity(nx), sp.identity(ny), sp.identity(nz)
        a = (sp.kron(sp.kron(iz, iy), tx) + sp.kron(sp.kron(iz, ty), ix)
             + sp.kron(sp.kron(tz, iy), ix)).tocsr()
        self.assertLess(relative_residual(a, x, b), 1e-8)

    def test_self_is_a_serial_solver_on_every_process(self):
        n = 6 + self.rank  # a matrix of its own size on each process
        a = poisson3d(n)
        b = np.ones(a.shape[0])
        solver = mpmg.Solver(comm=MPI.COMM_SELF, rtol=1e-10)
        report = solver.setup(a)
        self.assertIsNone(report["partition"])
        for _ in range(1 + 2 * self.rank):  # different counts: no collective over the world
            x, info = solver.solve(b)
            self.assertTrue(info["converged"], info["message"])
        self.assertLess(relative_residual(a, x, b), 1e-8)
        # The world's Solver refuses a whole matrix on several processes.
        with self.assertRaises(mpmg.Unsupported):
            mpmg.Solver(comm=self.comm).setup(a)


if __name__ == "__main__":
    unittest.main()
