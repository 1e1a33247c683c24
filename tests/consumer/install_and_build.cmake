# The test install_and_consume_package (cmake -P): installs the build in BUILD_DIR into a
# scratch prefix, configures and builds tests/consumer/ against it, and runs both programs.
# Fails (FATAL_ERROR, non-zero exit) at the first step that does.
set(work "${BUILD_DIR}/consumer-test")
file(REMOVE_RECURSE "${work}")
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
endfunction()
step("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${work}/prefix")
set(launcher "")
if(LAUNCHER)
  set(launcher "-DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER}")
endif()
step("configure the consumer" ${CMAKE_COMMAND} -S "${SOURCE_DIR}/tests/consumer"
     -B "${work}/build" -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release
     "-DCMAKE_PREFIX_PATH=${work}/prefix" "-DMPMG_EXAMPLES=${SOURCE_DIR}/examples" ${launcher})
step("build the consumer" ${CMAKE_COMMAND} --build "${work}/build")
step("run consumer_heat" "${work}/build/consumer_heat" 12 2)
step("run consumer_c" "${work}/build/consumer_c" 8)
step("run consumer_c_shared" "${work}/build/consumer_c_shared" 8)
# The installed Python module finds the installed libmpmg.so by itself (no MPMG_LIBRARY).
if(PYTHON)
  step("run the Python example from the prefix"
       ${CMAKE_COMMAND} -E env --unset=MPMG_LIBRARY
       "PYTHONPATH=${work}/prefix/lib/python3/dist-packages" PYTHONDONTWRITEBYTECODE=1
       ${PYTHON} "${SOURCE_DIR}/examples/poisson.py" 24)
  step("the Python module loaded the prefix's library"
       ${CMAKE_COMMAND} -E env --unset=MPMG_LIBRARY
       "PYTHONPATH=${work}/prefix/lib/python3/dist-packages" PYTHONDONTWRITEBYTECODE=1
       ${PYTHON} -c "import mpmg, sys; p = mpmg.library_path(); print(p); sys.exit(not p.startswith('${work}/prefix/'))")
endif()
file(REMOVE_RECURSE "${work}")
