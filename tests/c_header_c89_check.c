/* blockbloom/c.h must compile as C89 (built with -std=c89 -pedantic-errors). */
#include "blockbloom/c.h"

#include "c_api_test_support.h"

int bbtest_c89_header_check(void) {
  leveldb_filterpolicy_t* (*create)(double) = blockbloom_filterpolicy_create_blocked;
  return create != 0 && blockbloom_major_version() >= 0;
}
