# Strict warnings for mpmg's own targets; errors only when MPMG_WERROR is on (CI).
function(mpmg_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         -Wno-sign-conversion $<$<BOOL:${MPMG_WERROR}>:-Werror>)
endfunction()
