# Runs at install time (install(CODE) in CMakeLists.txt): writes a .pc file
# whose prefix and includedir are paths from the .pc file's own directory,
# computed from the prefix `cmake --install` really installs to (--prefix
# included), then installs it (listed in install_manifest.txt; DESTDIR
# honoured by file(INSTALL)). Absolute install directories stay where they
# are; relative ones follow the prefix.
#
# In: BB_PC_IN, BB_PC_OUT (the .pc.in and a scratch path in the build tree),
# BB_PC_LIBDIR and BB_PC_INCLUDEDIR (CMAKE_INSTALL_LIBDIR/INCLUDEDIR as
# configured), and the @-variables of the .pc.in: PROJECT_VERSION,
# BB_PC_CXX_RUNTIME_LIBS.
get_filename_component(prefix "${CMAKE_INSTALL_PREFIX}" ABSOLUTE)
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${BB_PC_${dir}}")
    set(full_${dir} "${BB_PC_${dir}}")
  else()
    set(full_${dir} "${prefix}/${BB_PC_${dir}}")
  endif()
endforeach()
file(RELATIVE_PATH BB_PC_TO_PREFIX "${full_LIBDIR}/pkgconfig" "${prefix}")
file(RELATIVE_PATH BB_PC_TO_INCLUDEDIR "${full_LIBDIR}/pkgconfig" "${full_INCLUDEDIR}")
configure_file("${BB_PC_IN}" "${BB_PC_OUT}" @ONLY)
file(INSTALL DESTINATION "${full_LIBDIR}/pkgconfig" TYPE FILE FILES "${BB_PC_OUT}")
