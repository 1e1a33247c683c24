"""mpmg from Python (python/mpmg.py): the 2D Poisson matrix as a SciPy sparse matrix, set up
once and solved for two right-hand sides, the same hierarchy as the preconditioner of SciPy's
CG, then a 3D Poisson problem given as a stencil. Exit code 0 when every solve converged with
||b - A x|| / ||b|| <= 1e-8.

Usage: PYTHONPATH=python MPMG_LIBRARY=build/release/libmpmg.so python3 examples/poisson.py [N]
"""
import sys

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import mpmg


def poisson2d(n):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    i = sp.identity(n)
    return (sp.kron(i, t) + sp.kron(t, i)).tocsr()


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    a = poisson2d(n)
    ok = True
    mpmg.keep_freed_memory()  # several setups and solves: reuse each other's freed memory
    with mpmg.Solver(precision="K64P32D16", rtol=1e-10) as solver:
        setup = solver.setup(a)
        print(f"setup: {a.shape[0]} rows, {len(setup['hierarchy']['levels'])} levels, "
              f"{setup['time_s']['setup']:.3f} s")
        x = None
        for k, b in enumerate([np.ones(a.shape[0]), np.sin(0.01 * np.arange(a.shape[0]))]):
            x, info = solver.solve(b)
            check = np.linalg.norm(b - a @ x) / np.linalg.norm(b)
            print(f"2D, right-hand side {k + 1}: {info['iterations']} iterations, relative "
                  f"residual {info['final_relative_residual']:.2e} (checked: {check:.2e})")
            ok &= bool(info["converged"]) and check <= 1e-8

    # One cycle per application as SciPy's preconditioner. SciPy's CG is not flexible, so the
    # V-cycle (the default `auto` may take the K-cycle, which varies between applications).
    with mpmg.Solver(precision="K64P32D16", multigrid={"cycle": "V"}) as pre:
        pre.setup(a)
        b = np.ones(a.shape[0])
        count = [0]

        def tick(_):
            count[0] += 1

        try:
            x, status = spla.cg(a, b, rtol=1e-10, atol=0.0, M=pre.aspreconditioner(),
                                callback=tick)
        except TypeError:  # SciPy before 1.12 calls rtol tol
            x, status = spla.cg(a, b, tol=1e-10, atol=0.0, M=pre.aspreconditioner(),
                                callback=tick)
        check = np.linalg.norm(b - a @ x) / np.linalg.norm(b)
        print(f"2D, SciPy's CG preconditioned by one V-cycle: {count[0]} iterations "
              f"(checked: {check:.2e})")
        ok &= status == 0 and check <= 1e-8

    # 7-point Poisson on an m^3 grid as a stencil: the structured path, no CSR built.
    m = max(n // 8, 4)
    offsets = [(0, 0, 0), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)]
    values = np.full((7, m**3), -1.0)
    values[0] = 6.0
    b = np.ones(m**3)
    solver = mpmg.Solver()
    solver.setup_stencil((m, m, m), offsets, values)
    x, info = solver.solve(b)
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    i = sp.identity(m)
    a3 = sp.kron(sp.kron(i, i), t) + sp.kron(sp.kron(i, t), i) + sp.kron(sp.kron(t, i), i)
    check = np.linalg.norm(b - a3 @ x) / np.linalg.norm(b)
    print(f"3D stencil {m}^3: {info['iterations']} iterations, relative residual "
          f"{info['final_relative_residual']:.2e} (checked: {check:.2e})")
    ok &= bool(info["converged"]) and check <= 1e-8
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
