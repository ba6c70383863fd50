# ctest hidden_imports: no object outside libblockbloom_core references a
# hidden blockbloom symbol.
#
# A hidden symbol binds inside the shared object that defines it. Code that
# is not part of libblockbloom_core (libblockbloom_leveldb, whose policies
# compile the kernels of simd/blocked_bloom-inl.h per target, and a user's
# code including the public blockbloom/blocked_bloom_inline.h) may therefore
# reference only blockbloom symbols it defines itself (the kernels' tables
# are inline variables: each object has its copy) or ones of default
# visibility. Otherwise a static build links, but -DBUILD_SHARED_LIBS=ON
# does not ("hidden symbol ... isn't defined").
#
#   cmake -DREADELF=<readelf> -DFILES=<file>|<file>... -P check_hidden_imports.cmake
#
# FILES: archives, shared libraries or objects, separated by '|'.
cmake_policy(VERSION 3.16)
if(NOT READELF OR NOT FILES)
  message(FATAL_ERROR "usage: cmake -DREADELF=... -DFILES=a|b -P check_hidden_imports.cmake")
endif()
string(REPLACE "|" ";" files "${FILES}")
set(found "")
foreach(file IN LISTS files)
  execute_process(COMMAND "${READELF}" -sW "${file}" OUTPUT_VARIABLE symbols
                  RESULT_VARIABLE status ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${READELF} -sW ${file} failed: ${error}")
  endif()
  # readelf -sW: Num: Value Size Type Bind Vis Ndx Name; blockbloom's C++
  # symbols are mangled _ZN10blockbloom... (_ZNK for const members). A
  # hidden symbol that the same file defines (another member of the same
  # archive) is resolved inside the library and is fine.
  set(pattern "_ZNK?10blockbloom[^\n ]*")
  string(REGEX MATCHALL "(DEFAULT|HIDDEN|PROTECTED) +[0-9]+ +${pattern}" defined "${symbols}")
  list(TRANSFORM defined REPLACE "^[A-Z]+ +[0-9]+ +" "")
  string(REGEX MATCHALL "HIDDEN +UND +${pattern}" hits "${symbols}")
  list(TRANSFORM hits REPLACE "^HIDDEN +UND +" "")
  list(REMOVE_DUPLICATES hits)
  foreach(name IN LISTS hits)
    if(NOT name IN_LIST defined)
      string(APPEND found "  ${file}: ${name}\n")
    endif()
  endforeach()
endforeach()
if(found)
  message(FATAL_ERROR "hidden blockbloom symbols referenced from outside "
                      "libblockbloom_core (a shared build would not link):\n${found}")
endif()
message(STATUS "no hidden blockbloom symbol imported by: ${FILES}")
