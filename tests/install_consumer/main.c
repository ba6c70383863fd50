/* A C program built with pkg-config alone, as the README shows:
 *   cc -std=c11 main.c $(pkg-config --cflags --libs blockbloom)
 * It opens a LevelDB database with blockbloom's blocked policy and a
 * FilteredDB through blockbloom/c.h, so the link needs every library the
 * static archives reference (the C++ runtime included). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockbloom/c.h"
#include "leveldb/c.h"

static int check(char* err, const char* what) {
  if (err == NULL) return 1;
  fprintf(stderr, "c consumer: %s: %s\n", what, err);
  leveldb_free(err);
  return 0;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "/tmp/blockbloom_c_consumer_db";
  char* err = NULL;
  leveldb_filterpolicy_t* policy = blockbloom_filterpolicy_create_blocked(10);
  leveldb_options_t* options = leveldb_options_create();
  leveldb_writeoptions_t* wo = leveldb_writeoptions_create();
  leveldb_readoptions_t* ro = leveldb_readoptions_create();
  leveldb_t* db;
  size_t len = 0;
  char* value;
  char* stats;
  leveldb_options_set_filter_policy(options, policy);
  leveldb_options_set_create_if_missing(options, 1);
  blockbloom_filtered_db_destroy_db(options, path, &err);
  if (!check(err, "destroy")) return 1;
  db = blockbloom_filtered_db_open(options, NULL, path, &err);
  if (!check(err, "open")) return 1;
  leveldb_put(db, wo, "key", 3, "value", 5, &err);
  if (!check(err, "put")) return 1;
  value = leveldb_get(db, ro, "key", 3, &len, &err);
  if (!check(err, "get") || value == NULL || len != 5 || memcmp(value, "value", 5) != 0) return 2;
  leveldb_free(value);
  stats = leveldb_property_value(db, "blockbloom.stats");
  if (stats == NULL || !blockbloom_is_filtered_db(db)) return 3;
  leveldb_free(stats);
  leveldb_close(db);
  blockbloom_filtered_db_destroy_db(options, path, &err);
  if (!check(err, "destroy")) return 1;
  leveldb_readoptions_destroy(ro);
  leveldb_writeoptions_destroy(wo);
  leveldb_options_destroy(options);
  blockbloom_filterpolicy_destroy(policy);
  printf("c consumer: ok (blockbloom %s)\n", blockbloom_version());
  return 0;
}
