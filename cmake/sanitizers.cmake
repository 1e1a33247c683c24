# ASan + UBSan for every target when MPMG_SANITIZE is on (the asan preset; run in .ci/run).
if(MPMG_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
