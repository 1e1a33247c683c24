"""mpmg from Python: mixed-precision multigrid-preconditioned Krylov solves of sparse systems.

A thin layer over mpmg's C interface (include/mpmg/mpmg.h) in libmpmg.so, loaded with ctypes;
it needs numpy, and takes SciPy sparse matrices when SciPy is there. Options are the keys of
`mpmg solve --config` (README, "Options"), the report is the result JSON of `mpmg solve --json`
without x.

    import mpmg, scipy.sparse as sp
    solver = mpmg.Solver(precision="K64P32D16", rtol=1e-10)
    solver.setup(A)                   # any SciPy sparse matrix; or setup_stencil(...)
    x, info = solver.solve(b)         # info["converged"], info["iterations"], ...
    x, info = solver.solve(b2, x0=x)  # the same hierarchy, from an initial guess

    x, info = mpmg.solve(A, b, rtol=1e-8)   # set up and solve once

Under mpirun with mpi4py (Debian's python3-mpi4py), a Solver of a communicator takes each
process's rows (setup_rows) or its box of a structured grid (setup_box), and solves for its
part of b and x:

    from mpi4py import MPI
    solver = mpmg.Solver(comm=MPI.COMM_WORLD)
    solver.setup_rows(first_row, n, my_rows)    # my_rows: SciPy sparse, global columns
    x_mine, info = solver.solve(b_mine)

Where libmpmg.so is: $MPMG_LIBRARY, else beside this file or up to three folders above it, in
lib, lib64 or the multiarch lib folder there (`cmake --install` puts this file in
PREFIX/lib/python3/dist-packages and the library in PREFIX/lib), else the system's library path.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import sysconfig
import threading

import numpy as np

__all__ = [
    "Solver",
    "solve",
    "MpmgError",
    "InvalidInput",
    "NumericalFailure",
    "Unsupported",
    "OutOfMemory",
    "InternalError",
    "library_path",
    "keep_freed_memory",
]

_OK, _INVALID, _NOT_CONVERGED, _NUMERICAL, _UNSUPPORTED, _OOM, _INTERNAL = 0, 2, 3, 4, 5, 6, 7


class MpmgError(RuntimeError):
    """A call of mpmg that failed; `status` is the C interface's status code."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


class InvalidInput(MpmgError, ValueError):
    """Bad options, matrix or vector (the message names which)."""


class NumericalFailure(MpmgError, ArithmeticError):
    """Setup could not proceed (a zero pivot, values K cannot hold)."""


class Unsupported(MpmgError):
    """A valid request mpmg does not do."""


class OutOfMemory(MpmgError, MemoryError):
    """An allocation failed."""


class InternalError(MpmgError):
    """A bug in mpmg: please report it with the message."""


_ERRORS = {
    _INVALID: InvalidInput,
    _NUMERICAL: NumericalFailure,
    _UNSUPPORTED: Unsupported,
    _OOM: OutOfMemory,
    _INTERNAL: InternalError,
}

_lib = None
_lib_path = None
_lib_lock = threading.Lock()


def _candidates():
    env = os.environ.get("MPMG_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    libs = ("", "lib", "lib64") + ((multiarch, os.path.join("lib", multiarch)) if multiarch else ())
    for up in ("", "..", os.path.join("..", ".."), os.path.join("..", "..", "..")):
        for lib in libs:
            yield os.path.normpath(os.path.join(here, up, lib, "libmpmg.so"))
    found = ctypes.util.find_library("mpmg")
    if found:
        yield found


def _load():
    global _lib, _lib_path
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if os.path.sep in path and not os.path.exists(path):
                tried.append(path)
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append(f"{path} ({e})")
                continue
            _declare(lib)
            _lib, _lib_path = lib, path
            return lib
        raise ImportError(
            "mpmg: libmpmg.so not found; build it (cmake --build, target mpmg_shared) and set "
            "MPMG_LIBRARY to its path. Tried: " + "; ".join(tried)
        )


def _declare(lib):
    c = ctypes
    p_double, p_int64, p_int32, p_int = (
        c.POINTER(c.c_double),
        c.POINTER(c.c_int64),
        c.POINTER(c.c_int32),
        c.POINTER(c.c_int),
    )
    lib.mpmg_last_error.restype = c.c_char_p
    lib.mpmg_last_error.argtypes = []
    lib.mpmg_keep_freed_memory.restype = c.c_int
    lib.mpmg_keep_freed_memory.argtypes = []
    lib.mpmg_solver_create.restype = c.c_int
    lib.mpmg_solver_create.argtypes = [c.c_char_p, c.POINTER(c.c_void_p)]
    lib.mpmg_solver_create_comm.restype = c.c_int
    lib.mpmg_solver_create_comm.argtypes = [c.c_char_p, c.c_int, c.POINTER(c.c_void_p)]
    lib.mpmg_solver_setup_rows.restype = c.c_int
    lib.mpmg_solver_setup_rows.argtypes = [
        c.c_void_p, c.c_int64, c.c_int64, c.c_int64, p_int64, p_int64, p_double]
    lib.mpmg_solver_setup_stencil_box.restype = c.c_int
    lib.mpmg_solver_setup_stencil_box.argtypes = [
        c.c_void_p, p_int, p_int, c.c_int, c.c_int, c.c_int, c.c_int, c.c_int, p_int, p_double]
    lib.mpmg_solver_destroy.restype = None
    lib.mpmg_solver_destroy.argtypes = [c.c_void_p]
    lib.mpmg_solver_setup_csr.restype = c.c_int
    lib.mpmg_solver_setup_csr.argtypes = [c.c_void_p, c.c_int64, p_int64, p_int64, p_double]
    lib.mpmg_solver_setup_csr32.restype = c.c_int
    lib.mpmg_solver_setup_csr32.argtypes = [c.c_void_p, c.c_int32, p_int32, p_int32, p_double]
    lib.mpmg_solver_setup_stencil.restype = c.c_int
    lib.mpmg_solver_setup_stencil.argtypes = [
        c.c_void_p, c.c_int, c.c_int, c.c_int, c.c_int, c.c_int, p_int, p_double
    ]
    lib.mpmg_solver_solve.restype = c.c_int
    lib.mpmg_solver_solve.argtypes = [c.c_void_p, p_double, p_double, p_int, p_double]
    lib.mpmg_solver_update_values.restype = c.c_int
    lib.mpmg_solver_update_values.argtypes = [c.c_void_p, c.c_int64, p_double]
    lib.mpmg_solver_apply.restype = c.c_int
    lib.mpmg_solver_apply.argtypes = [c.c_void_p, p_double, p_double]
    lib.mpmg_solver_report.restype = c.c_char_p
    lib.mpmg_solver_report.argtypes = [c.c_void_p]


def library_path() -> str:
    """The path of the libmpmg.so this module uses (loading it if need be)."""
    _load()
    return _lib_path


def keep_freed_memory() -> bool:
    """Lets the process keep the memory it frees for its own later allocations, so that each
    solve after the first reuses pages instead of faulting fresh ones in: call it once in a
    program that sets up or solves many times. Process-wide and irreversible (memory freed is no
    longer returned to the operating system). True when the allocator took it."""
    return _load().mpmg_keep_freed_memory() == 1


def _check(status: int, allow_not_converged: bool = False) -> int:
    if status == _OK or (allow_not_converged and status == _NOT_CONVERGED):
        return status
    message = _load().mpmg_last_error().decode("utf-8", "replace")
    raise _ERRORS.get(status, MpmgError)(message, status)


def _ptr(a: np.ndarray, ctype):
    return a.ctypes.data_as(ctypes.POINTER(ctype))


def _vector(v, n: int, what: str) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(v, dtype=np.float64))
    if a.ndim != 1 or a.shape[0] != n:
        raise InvalidInput(f"{what} has shape {np.shape(v)}; A has {n} rows", _INVALID)
    return a


def _stencil_arrays(grid, offsets, values):
    """(nx, ny, nz, r, offsets, values) of a stencil on the grid (nx, ny, nz), checked."""
    nx, ny, nz = (int(v) for v in grid)
    off = np.ascontiguousarray(np.asarray(offsets, dtype=np.intc))
    if off.ndim != 2 or off.shape[1] != 3:
        raise InvalidInput(f"offsets has shape {off.shape}; it must be (n_offsets, 3)", _INVALID)
    vals = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    cells = nx * ny * nz
    if vals.ndim == 2:
        r = 1
    elif vals.ndim == 4 and vals.shape[2] == vals.shape[3]:
        r = vals.shape[2]
    else:
        raise InvalidInput(
            f"values has shape {vals.shape}; it must be (n_offsets, cells) or "
            "(n_offsets, cells, r, r)", _INVALID)
    if vals.shape[0] != off.shape[0] or vals.shape[1] != cells:
        raise InvalidInput(
            f"values has shape {vals.shape}; the grid has {cells} cells and offsets "
            f"{off.shape[0]} rows", _INVALID)
    return nx, ny, nz, r, off, vals


def _csr_arrays(a, square: bool = True):
    """(rows, indptr, indices, data) of a square sparse matrix (or with square False, of any
    shape), columns sorted, no duplicates."""
    if hasattr(a, "tocsr"):
        m = a.tocsr()
        if square and m.shape[0] != m.shape[1]:
            raise InvalidInput(f"A is {m.shape[0]} x {m.shape[1]}; it must be square", _INVALID)
        if not m.has_canonical_format:  # a copy: the caller's matrix stays as it was
            m = m.copy()
            m.sum_duplicates()  # also sorts the columns of each row
        return m.shape[0], m.indptr, m.indices, m.data
    try:
        indptr, indices, data = a
    except (TypeError, ValueError):
        raise InvalidInput(
            "A must be a SciPy sparse matrix or a tuple (indptr, indices, data) of CSR arrays "
            "with 0-based, sorted columns",
            _INVALID,
        ) from None
    indptr = np.asarray(indptr)
    return indptr.shape[0] - 1, indptr, np.asarray(indices), np.asarray(data)


class Solver:
    """Set up once (a multigrid hierarchy for A), then solve for any number of right-hand sides.

    Options: a dict and/or keywords, the keys of `mpmg solve --config` (precision, solver, rtol,
    max_iter, restart, threads, multigrid: {...}, problem: {grid: [nx, ny, nz], components: r}).
    """

    def __init__(self, options: dict | None = None, comm=None, **kwargs):
        """`comm`: the processes that set up and solve together (an mpi4py communicator, or
        its Fortran handle as an int); None for MPI_COMM_WORLD, which is one process unless
        MPI was initialised (by mpi4py) under mpirun. A communicator of one process
        (MPI.COMM_SELF) is a serial solver on each process."""
        lib = _load()
        opts = dict(options or {})
        opts.update(kwargs)
        self._lib = lib
        self._handle = ctypes.c_void_p()
        self._rows = 0
        self._pattern = None  # (indptr, indices) of the last setup(a)
        text = json.dumps(opts).encode("utf-8")
        if comm is None:
            _check(lib.mpmg_solver_create(text, ctypes.byref(self._handle)))
        else:
            handle = comm.py2f() if hasattr(comm, "py2f") else int(comm)
            _check(lib.mpmg_solver_create_comm(text, handle, ctypes.byref(self._handle)))

    def close(self) -> None:
        """Frees the hierarchy now (otherwise when the object is collected)."""
        if getattr(self, "_handle", None) and self._handle.value:
            self._lib.mpmg_solver_destroy(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def rows(self) -> int:
        """A's rows (0 before a setup succeeded)."""
        return self._rows

    @property
    def report(self) -> dict:
        """The last setup's or solve's report (the result JSON without x); {} before any."""
        text = self._lib.mpmg_solver_report(self._live()).decode("utf-8")
        return json.loads(text) if text else {}

    def _live(self):
        if not self._handle.value:
            raise InvalidInput("the solver was closed", _INVALID)
        return self._handle

    def setup(self, a) -> dict:
        """Builds the hierarchy for A: a square SciPy sparse matrix (any format; converted to CSR
        with sorted columns, the caller's left as it is) or a tuple (indptr, indices, data) of
        0-based CSR arrays with sorted columns. The AMG path, or the structured path when the
        options give problem.grid. Returns the setup's report."""
        n, indptr, indices, data = _csr_arrays(a)
        data = np.ascontiguousarray(data, dtype=np.float64)
        h = self._live()
        small = (
            indptr.dtype == np.int32
            and indices.dtype == np.int32
            and n < 2**31
        )
        if small:
            ip = np.ascontiguousarray(indptr, dtype=np.int32)
            ix = np.ascontiguousarray(indices, dtype=np.int32)
            status = self._lib.mpmg_solver_setup_csr32(
                h, n, _ptr(ip, ctypes.c_int32), _ptr(ix, ctypes.c_int32),
                _ptr(data, ctypes.c_double))
        else:
            ip = np.ascontiguousarray(indptr, dtype=np.int64)
            ix = np.ascontiguousarray(indices, dtype=np.int64)
            status = self._lib.mpmg_solver_setup_csr(
                h, n, _ptr(ip, ctypes.c_int64), _ptr(ix, ctypes.c_int64),
                _ptr(data, ctypes.c_double))
        _check(status)
        self._rows = n
        self._pattern = (indptr, indices)
        return self.report

    def update_values(self, a) -> dict:
        """New values for the matrix of the last setup(a), on its pattern: a sparse matrix with
        that pattern (the same canonical CSR indptr and indices), or the values themselves in
        that CSR order. The hierarchy is rebuilt on that setup's aggregates, without a new
        aggregation (about half of an AMG setup): for Newton or time steps whose matrix keeps
        its pattern. AMG path only. Returns the setup's report."""
        h = self._live()
        if self._rows == 0 or self._pattern is None:
            raise InvalidInput("update_values needs an earlier setup(a) of a CSR matrix", _INVALID)
        indptr, indices = self._pattern
        if hasattr(a, "tocsr") or isinstance(a, tuple):
            n, ip, ix, data = _csr_arrays(a)
            if (n != self._rows or not np.array_equal(ip, indptr)
                    or not np.array_equal(ix, indices)):
                raise InvalidInput(
                    "update_values: the matrix's pattern differs from the last setup's; call "
                    "setup(a)", _INVALID)
        else:
            data = a
        data = np.ascontiguousarray(np.asarray(data, dtype=np.float64))
        if data.ndim != 1:
            raise InvalidInput(f"update_values: values have shape {data.shape}", _INVALID)
        _check(self._lib.mpmg_solver_update_values(h, data.shape[0],
                                                   _ptr(data, ctypes.c_double)))
        return self.report

    def setup_rows(self, first_row: int, n: int, rows) -> dict:
        """On a communicator of several processes (collective): this process's rows
        first_row .. first_row + rows.shape[0] - 1 of the n x n matrix A, with A's global column
        numbers (a SciPy sparse matrix of n columns, or (indptr, indices, data) CSR arrays),
        rank 0's rows first (README "Under mpirun, from your own program"). solve() and
        apply() then take this process's rows of the vectors. On one process: setup(A) for
        first_row 0 and all of A. Returns the setup's report."""
        count, indptr, indices, data = _csr_arrays(rows, square=False)
        ip = np.ascontiguousarray(indptr, dtype=np.int64)
        ix = np.ascontiguousarray(indices, dtype=np.int64)
        data = np.ascontiguousarray(data, dtype=np.float64)
        _check(self._lib.mpmg_solver_setup_rows(
            self._live(), int(first_row), count, int(n), _ptr(ip, ctypes.c_int64),
            _ptr(ix, ctypes.c_int64), _ptr(data, ctypes.c_double)))
        self._rows = count
        self._pattern = (indptr, indices)
        return self.report

    def setup_box(self, first_cell, grid, box, offsets, values) -> dict:
        """On a communicator of several processes (collective): this process's box of the grid
        `grid` = (NX, NY, NZ), `box` = (nx, ny, nz) cells from the global cell `first_cell`
        (0-based), with `offsets` and `values` as setup_stencil takes them for the box's cells,
        the entries towards the neighbours' cells included. The boxes form a grid of boxes in
        any rank order (README "A structured grid in boxes"); solve() and apply() then
        take the box's cells of the vectors. On one process: setup_stencil for first cell
        (0, 0, 0) and the whole grid. Returns the setup's report."""
        nx, ny, nz, r, off, vals = _stencil_arrays(box, offsets, values)
        first = np.ascontiguousarray(np.asarray(first_cell, dtype=np.intc).reshape(3))
        whole = np.ascontiguousarray(np.asarray(grid, dtype=np.intc).reshape(3))
        _check(self._lib.mpmg_solver_setup_stencil_box(
            self._live(), _ptr(first, ctypes.c_int), _ptr(whole, ctypes.c_int), nx, ny, nz, r,
            off.shape[0], _ptr(off, ctypes.c_int), _ptr(vals, ctypes.c_double)))
        self._rows = nx * ny * nz * r
        self._pattern = None
        return self.report

    def setup_stencil(self, grid, offsets, values) -> dict:
        """Builds the hierarchy for A on the grid `grid` = (nx, ny, nz) of cells, cell
        (i, j, k) = i + nx (j + ny k), from its stencil: `offsets`, n_offsets triples (dx, dy, dz)
        in -1..1 with (0, 0, 0) among them, and `values` of shape (n_offsets, cells) for one
        unknown per cell, or (n_offsets, cells, r, r) for r (values[d, c] couples cell c to
        cell c + offsets[d]; entries whose neighbour lies outside the grid are ignored). The
        structured path. Returns the setup's report."""
        nx, ny, nz, r, off, vals = _stencil_arrays(grid, offsets, values)
        cells = nx * ny * nz
        _check(self._lib.mpmg_solver_setup_stencil(
            self._live(), nx, ny, nz, r, off.shape[0], _ptr(off, ctypes.c_int),
            _ptr(vals, ctypes.c_double)))
        self._rows = cells * r
        self._pattern = None
        return self.report

    def solve(self, b, x0=None):
        """Solves A x = b from x0 (zeros when None) on the hierarchy of the last setup. Returns
        (x, info): x a new array, info the solve's report (info["converged"], "iterations",
        "final_relative_residual", "message", "guard_events", times, the hierarchy). A solve
        that did not converge returns its last iterate (never NaN) with info["converged"]
        False; bad input and failed setups raise."""
        h = self._live()
        if self._rows == 0:
            raise InvalidInput("solve before a successful setup", _INVALID)
        bb = _vector(b, self._rows, "b")
        x = np.zeros(self._rows) if x0 is None else _vector(x0, self._rows, "x0").copy()
        iterations = ctypes.c_int(0)
        rel = ctypes.c_double(0.0)
        _check(
            self._lib.mpmg_solver_solve(h, _ptr(bb, ctypes.c_double), _ptr(x, ctypes.c_double),
                                        ctypes.byref(iterations), ctypes.byref(rel)),
            allow_not_converged=True,
        )
        return x, self.report

    def apply(self, r):
        """z = M^-1 r: one cycle of the hierarchy of the last setup (no Krylov iteration), as a
        new array. The V-, W- and F-cycles are fixed linear operators; the K-cycle, which
        cycle "auto" picks for a large AMG matrix, varies between applications: create the
        Solver with multigrid={"cycle": "V"} to use it inside a non-flexible Krylov method
        (SciPy's cg, gmres). Raises NumericalFailure when the cycle gives a non-finite value."""
        h = self._live()
        if self._rows == 0:
            raise InvalidInput("apply before a successful setup", _INVALID)
        rr = _vector(r, self._rows, "r")
        z = np.empty(self._rows)
        _check(self._lib.mpmg_solver_apply(h, _ptr(rr, ctypes.c_double),
                                           _ptr(z, ctypes.c_double)))
        return z

    def aspreconditioner(self):
        """The hierarchy as a scipy.sparse.linalg.LinearOperator applying M^-1 (apply), for
        M= of SciPy's Krylov methods. See apply about the K-cycle: for SciPy's cg and gmres
        create the Solver with multigrid={"cycle": "V"}."""
        from scipy.sparse.linalg import LinearOperator

        if self._rows == 0:
            raise InvalidInput("aspreconditioner before a successful setup", _INVALID)
        n = self._rows
        return LinearOperator((n, n), matvec=lambda r: self.apply(np.ravel(r)), dtype=np.float64)


def solve(a, b, x0=None, options: dict | None = None, **kwargs):
    """Sets up for A and solves A x = b once: Solver(options, **kwargs), setup(a), solve(b, x0).
    Returns (x, info) as Solver.solve."""
    with Solver(options, **kwargs) as s:
        s.setup(a)
        return s.solve(b, x0)
