/* Assertions for the tests written in C (c_api_test.c,
 * c_api_test_filtered_db.c). Each test file defines `static int g_failures`;
 * the macros count a failure there and return 0 from the calling function. */
#ifndef BLOCKBLOOM_TESTS_C_TEST_CHECK_H_
#define BLOCKBLOOM_TESTS_C_TEST_CHECK_H_

#include <stdio.h>

#include "leveldb/c.h"

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                            \
      return 0;                                                                \
    }                                                                          \
  } while (0)

/* A LevelDB C API error string: reported, freed and reset to NULL. */
#define CHECK_NO_ERROR(err)                                                     \
  do {                                                                          \
    if ((err) != NULL) {                                                        \
      fprintf(stderr, "%s:%d: LevelDB error: %s\n", __FILE__, __LINE__, (err)); \
      leveldb_free(err);                                                        \
      (err) = NULL;                                                             \
      ++g_failures;                                                             \
      return 0;                                                                 \
    }                                                                           \
  } while (0)

#endif /* BLOCKBLOOM_TESTS_C_TEST_CHECK_H_ */
