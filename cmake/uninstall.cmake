# `cmake --build <build> --target uninstall`: removes every file the last
# `cmake --install` of this build tree installed (install_manifest.txt; the
# same DESTDIR, if one was used), and says which were already gone.
# Directories are left in place: a prefix such as /usr/local is shared.
# In: BB_MANIFEST, the build tree's install_manifest.txt.
set(manifest "${BB_MANIFEST}")
if(NOT EXISTS "${manifest}")
  message(FATAL_ERROR "no ${manifest}: nothing was installed from this build tree")
endif()
file(STRINGS "${manifest}" files)
foreach(file IN LISTS files)
  set(path "$ENV{DESTDIR}${file}")
  if(IS_SYMLINK "${path}" OR EXISTS "${path}")
    message(STATUS "Removing ${path}")
    file(REMOVE "${path}")
  else()
    message(STATUS "Already gone: ${path}")
  endif()
endforeach()
