! Fortran interface to mpmg (the C interface of include/mpmg/mpmg.h, through ISO_C_BINDING).
! Compile this file with the program that uses it (a .mod file is particular to one compiler)
! and link libmpmg; see examples/poisson_fortran.f90.
!
!   use mpmg
!   type(c_ptr) :: s
!   status = mpmg_create('{"precision": "K64P32D16"}', s)   ! '' for the defaults
!   status = mpmg_setup_csr(s, row_ptr, col, val, 1)         ! 1-based CSR (0 for 0-based),
!                                                             ! default or 64-bit integers
!   status = mpmg_solve(s, b, x, iterations, rel)             ! x: initial guess in, solution out
!   status = mpmg_apply(s, r, z)                              ! z = M^-1 r: one cycle, for a
!                                                             ! Krylov method of your own
!   status = mpmg_update_values(s, val)                       ! new values, same pattern
!   status = mpmg_setup_rows(s, first_row, n, row_ptr, col, val, 1)  ! under mpirun: this
!                                                             ! process's rows of the n x n A
!   status = mpmg_setup_stencil_box(s, first_cell, grid, nx, ny, nz, r, offsets, values, 1)
!                                            ! under mpirun: this process's box of the grid
!   status = mpmg_create_comm('', comm, s)   ! the processes of an MPI communicator (integer;
!                                            ! comm%MPI_VAL with mpi_f08); MPI_COMM_WORLD above
!   if (status /= MPMG_OK) print *, mpmg_last_error()
!   call mpmg_destroy(s)
module mpmg
    use, intrinsic :: iso_c_binding
    implicit none
    private

    integer(c_int), parameter, public :: MPMG_OK = 0, MPMG_INVALID_INPUT = 2, &
        MPMG_NOT_CONVERGED = 3, MPMG_NUMERICAL_ERROR = 4, MPMG_UNSUPPORTED = 5, &
        MPMG_OUT_OF_MEMORY = 6, MPMG_INTERNAL_ERROR = 7

    public :: c_ptr, c_null_ptr, c_int, c_int32_t, c_int64_t, c_double
    public :: mpmg_create, mpmg_create_comm, mpmg_destroy, mpmg_setup_csr, mpmg_setup_stencil, &
        mpmg_setup_stencil_box, mpmg_solve, mpmg_apply, mpmg_update_values, mpmg_setup_rows

    ! CSR with 64-bit or default (32-bit) integer indices.
    interface mpmg_setup_csr
        module procedure setup_csr64, setup_csr32
    end interface
    interface mpmg_setup_rows
        module procedure setup_rows64, setup_rows32
    end interface
    public :: mpmg_last_error, mpmg_report, mpmg_keep_freed_memory

    interface
        integer(c_int) function c_create(options_json, solver) bind(C, name="mpmg_solver_create")
            import :: c_int, c_char, c_ptr
            character(kind=c_char), dimension(*), intent(in) :: options_json
            type(c_ptr), intent(out) :: solver
        end function
        integer(c_int) function c_create_comm(options_json, comm, solver) &
            bind(C, name="mpmg_solver_create_comm")
            import :: c_int, c_char, c_ptr
            character(kind=c_char), dimension(*), intent(in) :: options_json
            integer(c_int), value :: comm
            type(c_ptr), intent(out) :: solver
        end function
        subroutine c_destroy(solver) bind(C, name="mpmg_solver_destroy")
            import :: c_ptr
            type(c_ptr), value :: solver
        end subroutine
        integer(c_int) function c_setup_csr(solver, rows, row_ptr, col, val) &
            bind(C, name="mpmg_solver_setup_csr")
            import :: c_int, c_int64_t, c_double, c_ptr
            type(c_ptr), value :: solver
            integer(c_int64_t), value :: rows
            integer(c_int64_t), intent(in) :: row_ptr(*), col(*)
            real(c_double), intent(in) :: val(*)
        end function
        integer(c_int) function c_setup_rows(solver, first_row, rows, n, row_ptr, col, val) &
            bind(C, name="mpmg_solver_setup_rows")
            import :: c_int, c_int64_t, c_double, c_ptr
            type(c_ptr), value :: solver
            integer(c_int64_t), value :: first_row, rows, n
            integer(c_int64_t), intent(in) :: row_ptr(*), col(*)
            real(c_double), intent(in) :: val(*)
        end function
        integer(c_int) function c_setup_stencil(solver, nx, ny, nz, r, n_offsets, offsets, &
                                                values) bind(C, name="mpmg_solver_setup_stencil")
            import :: c_int, c_double, c_ptr
            type(c_ptr), value :: solver
            integer(c_int), value :: nx, ny, nz, r, n_offsets
            integer(c_int), intent(in) :: offsets(*)
            real(c_double), intent(in) :: values(*)
        end function
        integer(c_int) function c_setup_stencil_box(solver, first_cell, grid, nx, ny, nz, r, &
                                                    n_offsets, offsets, values) &
            bind(C, name="mpmg_solver_setup_stencil_box")
            import :: c_int, c_double, c_ptr
            type(c_ptr), value :: solver
            integer(c_int), intent(in) :: first_cell(3), grid(3)
            integer(c_int), value :: nx, ny, nz, r, n_offsets
            integer(c_int), intent(in) :: offsets(*)
            real(c_double), intent(in) :: values(*)
        end function
        integer(c_int) function c_solve(solver, b, x, iterations, relative_residual) &
            bind(C, name="mpmg_solver_solve")
            import :: c_int, c_double, c_ptr
            type(c_ptr), value :: solver
            real(c_double), intent(in) :: b(*)
            real(c_double), intent(inout) :: x(*)
            integer(c_int), intent(out) :: iterations
            real(c_double), intent(out) :: relative_residual
        end function
        integer(c_int) function c_update_values(solver, nnz, values) &
            bind(C, name="mpmg_solver_update_values")
            import :: c_int, c_int64_t, c_double, c_ptr
            type(c_ptr), value :: solver
            integer(c_int64_t), value :: nnz
            real(c_double), intent(in) :: values(*)
        end function
        integer(c_int) function c_apply(solver, r, z) bind(C, name="mpmg_solver_apply")
            import :: c_int, c_double, c_ptr
            type(c_ptr), value :: solver
            real(c_double), intent(in) :: r(*)
            real(c_double), intent(out) :: z(*)
        end function
        type(c_ptr) function c_last_error() bind(C, name="mpmg_last_error")
            import :: c_ptr
        end function
        integer(c_int) function c_keep_freed_memory() bind(C, name="mpmg_keep_freed_memory")
            import :: c_int
        end function
        type(c_ptr) function c_report(solver) bind(C, name="mpmg_solver_report")
            import :: c_ptr
            type(c_ptr), value :: solver
        end function
        integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
            import :: c_size_t, c_ptr
            type(c_ptr), value :: s
        end function
    end interface

contains

    ! A solver with the options of a JSON object as in `mpmg solve --config` ('' for the
    ! defaults); on failure solver is c_null_ptr and mpmg_last_error() says why.
    integer(c_int) function mpmg_create(options_json, solver)
        character(len=*), intent(in) :: options_json
        type(c_ptr), intent(out) :: solver
        mpmg_create = c_create(trim(options_json)//c_null_char, solver)
    end function

    integer(c_int) function mpmg_create_comm(options_json, comm, solver)
        character(len=*), intent(in) :: options_json
        integer, intent(in) :: comm
        type(c_ptr), intent(out) :: solver
        mpmg_create_comm = c_create_comm(trim(options_json)//c_null_char, int(comm, c_int), solver)
    end function

    subroutine mpmg_destroy(solver)
        type(c_ptr), intent(inout) :: solver
        call c_destroy(solver)
        solver = c_null_ptr
    end subroutine

    ! A as CSR with rows = size(row_ptr) - 1; base 1 for Fortran's 1-based row_ptr and col, 0
    ! for 0-based ones. The AMG path, or the structured path with a "grid" in the options.
    integer(c_int) function setup_csr64(solver, row_ptr, col, val, base)
        type(c_ptr), intent(in) :: solver
        integer(c_int64_t), intent(in) :: row_ptr(:), col(:)
        real(c_double), intent(in) :: val(:)
        integer, intent(in) :: base
        if (base == 0) then
            setup_csr64 = c_setup_csr(solver, size(row_ptr, kind=c_int64_t) - 1, row_ptr, col, &
                                      val)
        else
            setup_csr64 = c_setup_csr(solver, size(row_ptr, kind=c_int64_t) - 1, &
                                      row_ptr - base, col - base, val)
        end if
    end function

    ! The indices widened to 64 bits on the way (the C side copies them anyway).
    integer(c_int) function setup_csr32(solver, row_ptr, col, val, base)
        type(c_ptr), intent(in) :: solver
        integer(c_int32_t), intent(in) :: row_ptr(:), col(:)
        real(c_double), intent(in) :: val(:)
        integer, intent(in) :: base
        setup_csr32 = c_setup_csr(solver, size(row_ptr, kind=c_int64_t) - 1, &
                                  int(row_ptr, c_int64_t) - base, int(col, c_int64_t) - base, val)
    end function

    ! Under mpirun (MPI initialised by the program): this process's rows of the n x n matrix A,
    ! first_row .. first_row + size(row_ptr) - 2, as CSR over its own rows with A's global
    ! column numbers; first_row, row_ptr and col 1-based for base 1, 0-based for base 0. Rank
    ! 0's rows first, then rank 1's, ...; a process may have none. Collective: every process
    ! calls it, then mpmg_solve and mpmg_apply together with its rows of b, x, r and z.
    ! Without mpirun: mpmg_setup_csr for all of A from the first row.
    integer(c_int) function setup_rows64(solver, first_row, n, row_ptr, col, val, base)
        type(c_ptr), intent(in) :: solver
        integer(c_int64_t), intent(in) :: first_row, n
        integer(c_int64_t), intent(in) :: row_ptr(:), col(:)
        real(c_double), intent(in) :: val(:)
        integer, intent(in) :: base
        setup_rows64 = c_setup_rows(solver, first_row - base, size(row_ptr, kind=c_int64_t) - 1, &
                                    n, row_ptr - base, col - base, val)
    end function

    integer(c_int) function setup_rows32(solver, first_row, n, row_ptr, col, val, base)
        type(c_ptr), intent(in) :: solver
        integer(c_int32_t), intent(in) :: first_row, n
        integer(c_int32_t), intent(in) :: row_ptr(:), col(:)
        real(c_double), intent(in) :: val(:)
        integer, intent(in) :: base
        setup_rows32 = c_setup_rows(solver, int(first_row, c_int64_t) - base, &
                                    size(row_ptr, kind=c_int64_t) - 1, int(n, c_int64_t), &
                                    int(row_ptr, c_int64_t) - base, &
                                    int(col, c_int64_t) - base, val)
    end function

    ! A on an nx x ny x nz grid with r unknowns per cell: offsets(3, n) holds (dx, dy, dz) of
    ! each stencil offset, values(r, r, cells, n) the blocks (values(b, a, c, d) couples unknown
    ! a of cell c to unknown b of its neighbour at offset d; cells numbered x fastest, from 1).
    integer(c_int) function mpmg_setup_stencil(solver, nx, ny, nz, r, offsets, values)
        type(c_ptr), intent(in) :: solver
        integer, intent(in) :: nx, ny, nz, r
        integer(c_int), intent(in) :: offsets(:, :)
        real(c_double), intent(in) :: values(:, :, :, :)
        mpmg_setup_stencil = c_setup_stencil(solver, int(nx, c_int), int(ny, c_int), &
                                             int(nz, c_int), int(r, c_int), &
                                             int(size(offsets, 2), c_int), offsets, values)
    end function

    ! Under mpirun: this process's box of the grid, nx x ny x nz cells from first_cell (numbered
    ! from `base`: 1 for Fortran's cells 1..n, 0 for 0..n-1), values as mpmg_setup_stencil's,
    ! the entries towards the neighbours' cells included.
    integer(c_int) function mpmg_setup_stencil_box(solver, first_cell, grid, nx, ny, nz, r, &
                                                   offsets, values, base)
        type(c_ptr), intent(in) :: solver
        integer, intent(in) :: first_cell(3), grid(3), nx, ny, nz, r, base
        integer(c_int), intent(in) :: offsets(:, :)
        real(c_double), intent(in) :: values(:, :, :, :)
        mpmg_setup_stencil_box = c_setup_stencil_box(solver, int(first_cell - base, c_int), &
                                                     int(grid, c_int), int(nx, c_int), &
                                                     int(ny, c_int), int(nz, c_int), &
                                                     int(r, c_int), int(size(offsets, 2), c_int), &
                                                     offsets, values)
    end function

    ! Solves A x = b from the initial guess in x; MPMG_OK when it converged.
    integer(c_int) function mpmg_solve(solver, b, x, iterations, relative_residual)
        type(c_ptr), intent(in) :: solver
        real(c_double), intent(in) :: b(:)
        real(c_double), intent(inout) :: x(:)
        integer(c_int), intent(out) :: iterations
        real(c_double), intent(out) :: relative_residual
        mpmg_solve = c_solve(solver, b, x, iterations, relative_residual)
    end function

    ! z = M^-1 r: one cycle of the hierarchy (r and z of A's rows), for a Krylov method of
    ! your own. The K-cycle (auto's choice for a large AMG matrix) varies between calls: give
    ! "multigrid": {"cycle": "V"} in the options for plain CG or GMRES.
    integer(c_int) function mpmg_apply(solver, r, z)
        type(c_ptr), intent(in) :: solver
        real(c_double), intent(in) :: r(:)
        real(c_double), intent(out) :: z(:)
        mpmg_apply = c_apply(solver, r, z)
    end function

    ! New values for the CSR matrix of the last mpmg_setup_csr (the same pattern, in its order):
    ! the hierarchy is rebuilt on that setup's aggregates, without a new aggregation.
    integer(c_int) function mpmg_update_values(solver, values)
        type(c_ptr), intent(in) :: solver
        real(c_double), intent(in) :: values(:)
        mpmg_update_values = c_update_values(solver, size(values, kind=c_int64_t), values)
    end function

    ! The message of this thread's last failed call ('' when none failed).
    function mpmg_last_error() result(message)
        character(len=:), allocatable :: message
        message = from_c(c_last_error())
    end function

    ! Keeps freed memory for the process's later allocations (mpmg_keep_freed_memory in
    ! mpmg.h): once at start-up in a program with many solves. True when the allocator took it.
    logical function mpmg_keep_freed_memory()
        mpmg_keep_freed_memory = c_keep_freed_memory() == 1
    end function

    ! The last setup's or solve's report as JSON.
    function mpmg_report(solver) result(json)
        type(c_ptr), intent(in) :: solver
        character(len=:), allocatable :: json
        json = from_c(c_report(solver))
    end function

    function from_c(p) result(s)
        type(c_ptr), intent(in) :: p
        character(len=:), allocatable :: s
        character(kind=c_char), pointer :: chars(:)
        integer :: i, n
        n = int(c_strlen(p))
        allocate (character(len=n) :: s)
        if (n == 0) return
        call c_f_pointer(p, chars, [n])
        do i = 1, n
            s(i:i) = chars(i)
        end do
    end function

end module mpmg
