! mpmg from Fortran (include/mpmg/mpmg.f90): the 7-point Poisson matrix on an n^3 grid,
! assembled as 1-based CSR, set up once and solved for two right-hand sides; then the same CSR
! with 32-bit 0-based indices, as one process's rows, and the same matrix as a stencil. Exit code 0 when every solve converged with ||b - A x|| / ||b|| <= 1e-8.
!
! Usage: mpmg_example_fortran [N]   (default 16)
program poisson_fortran
    use mpmg
    implicit none
    integer :: n, i, j, k, rhs, nnz, cells
    integer(c_int) :: status, iterations
    real(c_double) :: rel
    integer(c_int64_t), allocatable :: row_ptr(:), col(:)
    real(c_double), allocatable :: val(:), b(:), x(:), values(:, :, :, :)
    integer(c_int) :: offsets(3, 7)
    type(c_ptr) :: s
    character(len=16) :: arg
    logical :: bad

    n = 16
    if (command_argument_count() > 0) then
        call get_command_argument(1, arg)
        read (arg, *) n
    end if
    cells = n**3
    allocate (row_ptr(cells + 1), col(7*cells), val(7*cells), b(cells), x(cells))

    ! 1-based CSR, columns increasing in each row: -z, -y, -x, centre, +x, +y, +z.
    nnz = 0
    row_ptr(1) = 1
    do k = 1, n
        do j = 1, n
            do i = 1, n
                call add(k > 1, -n*n)
                call add(j > 1, -n)
                call add(i > 1, -1)
                call add(.true., 0)
                call add(i < n, 1)
                call add(j < n, n)
                call add(k < n, n*n)
                row_ptr(cell(i, j, k) + 1) = nnz + 1
            end do
        end do
    end do

    bad = .false.
    ! Several setups and solves in this program: let them reuse each other's freed memory.
    if (.not. mpmg_keep_freed_memory()) print '(a)', 'freed memory is returned to the system'
    status = mpmg_create('{"precision": "K64P32D16"}', s)
    if (status /= MPMG_OK) call fail('mpmg_create')
    status = mpmg_setup_csr(s, row_ptr, col(1:nnz), val(1:nnz), 1)
    if (status /= MPMG_OK) call fail('mpmg_setup_csr')
    call solve_twice('CSR')
    ! New values on the same pattern (a time step, a Newton step): the setup's aggregates kept.
    status = mpmg_update_values(s, val(1:nnz))
    if (status /= MPMG_OK) call fail('mpmg_update_values')
    call solve_twice('CSR, values updated')
    call mpmg_destroy(s)

    ! The same CSR with default (32-bit) integers, 0-based.
    status = mpmg_create('', s)
    if (status /= MPMG_OK) call fail('mpmg_create')
    status = mpmg_setup_csr(s, int(row_ptr) - 1, int(col(1:nnz)) - 1, val(1:nnz), 0)
    if (status /= MPMG_OK) call fail('mpmg_setup_csr (32-bit)')
    call solve_twice('CSR, 32-bit indices')
    call mpmg_destroy(s)

    ! The same CSR as the rows of one process from row 1 (the call a program makes under
    ! mpirun with its own rows; without mpirun it is all of A).
    status = mpmg_create('', s)
    if (status /= MPMG_OK) call fail('mpmg_create')
    status = mpmg_setup_rows(s, 1_c_int64_t, int(cells, c_int64_t), row_ptr, col(1:nnz), &
                             val(1:nnz), 1)
    if (status /= MPMG_OK) call fail('mpmg_setup_rows')
    call solve_twice('CSR, rows of one process')
    call mpmg_destroy(s)

    ! The same matrix as a stencil: one value per cell and offset (outside the grid: ignored).
    offsets = reshape([0, 0, -1, 0, -1, 0, -1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1], [3, 7])
    allocate (values(1, 1, cells, 7))
    values = -1.0_c_double
    values(1, 1, :, 4) = 6.0_c_double
    status = mpmg_create('', s)
    if (status /= MPMG_OK) call fail('mpmg_create')
    status = mpmg_setup_stencil(s, n, n, n, 1, offsets, values)
    if (status /= MPMG_OK) call fail('mpmg_setup_stencil')
    call solve_twice('stencil')
    call mpmg_destroy(s)

    ! The stencil as the box of one process, on the communicator of that process alone
    ! (MPI_COMM_SELF's handle where MPI runs; any handle is one process without it): the box
    ! from cell (1, 1, 1), 1-based, is the whole grid.
    status = mpmg_create_comm('', 1, s)
    if (status /= MPMG_OK) call fail('mpmg_create_comm')
    status = mpmg_setup_stencil_box(s, [1, 1, 1], [n, n, n], n, n, n, 1, offsets, values, 1)
    if (status /= MPMG_OK) call fail('mpmg_setup_stencil_box')
    call solve_twice('stencil, box of one process')
    call mpmg_destroy(s)

    status = mpmg_create('{"max_iter": 0}', s)
    print '(a, i0, 3a)', 'bad options: status ', status, ' "', mpmg_last_error(), '"'
    if (status /= MPMG_INVALID_INPUT) bad = .true.
    deallocate (row_ptr, col, val, b, x, values)  ! the main program's arrays are not freed at
    if (bad) stop 1                               ! its end (LeakSanitizer would report them)

contains

    integer function cell(i, j, k)
        integer, intent(in) :: i, j, k
        cell = i + n*((j - 1) + n*(k - 1))
    end function

    subroutine add(inside, delta)
        logical, intent(in) :: inside
        integer, intent(in) :: delta
        if (.not. inside) return
        nnz = nnz + 1
        col(nnz) = cell(i, j, k) + delta
        val(nnz) = merge(6.0_c_double, -1.0_c_double, delta == 0)
    end subroutine

    subroutine fail(what)
        character(len=*), intent(in) :: what
        print '(4a)', what, ' failed: ', mpmg_last_error()
        stop 1
    end subroutine

    subroutine solve_twice(path)
        character(len=*), intent(in) :: path
        real(c_double) :: ax, r2, b2
        integer :: c, p
        do rhs = 1, 2
            do c = 1, cells
                b(c) = merge(1.0_c_double, sin(0.01_c_double*c), rhs == 1)
            end do
            x = 0.0_c_double
            status = mpmg_solve(s, b, x, iterations, rel)
            if (status /= MPMG_OK) call fail('mpmg_solve')
            r2 = 0.0_c_double
            b2 = 0.0_c_double
            do c = 1, cells
                ax = 0.0_c_double
                do p = int(row_ptr(c)), int(row_ptr(c + 1)) - 1
                    ax = ax + val(p)*x(col(p))
                end do
                r2 = r2 + (b(c) - ax)**2
                b2 = b2 + b(c)**2
            end do
            print '(2a, i0, a, i0, a, es9.2)', path, ', right-hand side ', rhs, ': ', &
                iterations, ' iterations, checked relative residual ', sqrt(r2/b2)
            if (.not. sqrt(r2/b2) <= 1e-8_c_double) bad = .true.
        end do
    end subroutine

end program poisson_fortran
