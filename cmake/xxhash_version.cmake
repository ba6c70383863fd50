# The on-disk hash is XXH3-64 (seed 0) from the system's xxhash.h, compiled
# inline. XXH3's output is frozen from xxHash 0.8.0 (its release notes: "XXH3
# and XXH128 are now considered stable"; 0.7.x produced other values), so an
# older xxhash.h would write and read filters no other build agrees with.
#
#   include(xxhash_version.cmake); bb_check_xxhash_version(<path of xxhash.h>)
# fails the configure on a version below 0.8.0 or one it cannot read.
# `cmake -DXXHASH_HEADER=<path> -P xxhash_version.cmake` runs the same check
# (tests/CMakeLists.txt checks it fails on a 0.7.3 header).
function(bb_check_xxhash_version header)
  file(STRINGS "${header}" lines REGEX "^#define XXH_VERSION_(MAJOR|MINOR|RELEASE) +[0-9]+")
  foreach(part MAJOR MINOR RELEASE)
    set(v_${part} "")
    foreach(line ${lines})
      if(line MATCHES "^#define XXH_VERSION_${part} +([0-9]+)")
        set(v_${part} "${CMAKE_MATCH_1}")
      endif()
    endforeach()
    if(v_${part} STREQUAL "")
      message(FATAL_ERROR "${header}: no XXH_VERSION_${part}; blockbloom needs xxHash >= 0.8.0")
    endif()
  endforeach()
  set(version "${v_MAJOR}.${v_MINOR}.${v_RELEASE}")
  if(version VERSION_LESS 0.8.0)
    message(FATAL_ERROR
      "${header} is xxHash ${version}; blockbloom needs >= 0.8.0, where XXH3's output is "
      "frozen (the on-disk hash of every filter)")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND XXHASH_HEADER)
  bb_check_xxhash_version("${XXHASH_HEADER}")
endif()
