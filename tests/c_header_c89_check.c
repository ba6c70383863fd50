/* blockbloom/c.h must compile as C89 (built with -std=c89 -pedantic-errors). */
#include "blockbloom/c.h"

#include "c_api_test_support.h"

int bbtest_c89_header_check(void) {
  leveldb_filterpolicy_t* (*create)(double) = blockbloom_filterpolicy_create_blocked;
  leveldb_t* (*open)(const leveldb_options_t*, const blockbloom_filtered_db_options_t*, const char*,
                     char**) = blockbloom_filtered_db_open;
  void (*set_progress)(blockbloom_filtered_db_options_t*, void*, void (*)(void*, uint64_t),
                       uint64_t) = blockbloom_filtered_db_options_set_progress;
  int kind = blockbloom_index_counting;
  return create != 0 && open != 0 && set_progress != 0 && kind != blockbloom_index_dleft &&
         blockbloom_major_version() >= 0;
}
