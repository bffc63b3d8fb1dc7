/* A C host: RocksDB's C API, rocksketch's merge operator made with
 * rocksdb_mergeoperator_create from the C ABI's callbacks, count-min increments and
 * Bloom adds built and answered through the C ABI. Prints a transcript in the format of
 * host.cc, which capi/tests/foreign_host.rs replays through the Rust library.
 *
 * Usage: host_c DIR */
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rocksketch.h"

static void check_status(rks_status s, const char *what) {
  if (s != RKS_OK) {
    fprintf(stderr, "host_c: %s: %s\n", what, rks_status_message(s));
    exit(2);
  }
}

static void check_err(char *err, const char *what) {
  if (err != NULL) {
    fprintf(stderr, "host_c: %s: %s\n", what, err);
    exit(2);
  }
}

static rocksdb_t *db_open(const char *dir, rocksdb_options_t *opts) {
  char *err = NULL;
  rocksdb_t *db = rocksdb_open(opts, dir, &err);
  check_err(err, "open");
  return db;
}

/* The stored value of `key`, or NULL (length 0) if none; free with rocksdb_free. */
static char *get(rocksdb_t *db, const char *key, size_t *len) {
  char *err = NULL;
  rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
  char *value = rocksdb_get(db, ro, key, strlen(key), len, &err);
  rocksdb_readoptions_destroy(ro);
  check_err(err, "get");
  return value;
}

static void merge_buf(rocksdb_writebatch_t *batch, const char *key, rks_buf *buf) {
  rocksdb_writebatch_merge(batch, key, strlen(key), (const char *)buf->data, buf->len);
  rks_buf_free(buf);
}

static void write_batch(rocksdb_t *db, rocksdb_writebatch_t *batch) {
  char *err = NULL;
  rocksdb_writeoptions_t *wo = rocksdb_writeoptions_create();
  rocksdb_write(db, wo, batch, &err);
  rocksdb_writeoptions_destroy(wo);
  check_err(err, "write");
  rocksdb_writebatch_clear(batch);
}

static uint32_t cms_query(rocksdb_t *db, rks_cms_layout layout, const char *item) {
  uint32_t pages[8], offsets[8];
  const uint8_t *ptrs[8];
  size_t lens[8];
  char *values[8];
  char key[64];
  check_status(rks_cms_locate(layout, (const uint8_t *)item, strlen(item), pages, offsets, 8),
               "cms locate");
  for (uint32_t row = 0; row < layout.depth; row++) {
    snprintf(key, sizeof key, "p:clicks:0:%u", pages[row]);
    values[row] = get(db, key, &lens[row]);
    ptrs[row] = (const uint8_t *)values[row];
  }
  uint32_t estimate = 0;
  check_status(rks_cms_query(layout, (const uint8_t *)item, strlen(item), ptrs, lens,
                             layout.depth, &estimate),
               "cms query");
  for (uint32_t row = 0; row < layout.depth; row++) rocksdb_free(values[row]);
  return estimate;
}

static void cms_incrby(rocksdb_t *db, rocksdb_writebatch_t *batch, rks_cms_layout layout,
                       const char *item, uint32_t n) {
  uint32_t pages[8], offsets[8];
  char key[64];
  rks_buf buf = {NULL, 0};
  check_status(rks_cms_locate(layout, (const uint8_t *)item, strlen(item), pages, offsets, 8),
               "cms locate");
  /* One operand per row: two rows on one page are two operands to it, which the merge
   * adds up like one. */
  for (uint32_t row = 0; row < layout.depth; row++) {
    check_status(rks_counter_delta(rks_cms_page_len(layout, pages[row]), &offsets[row], &n, 1,
                                   &buf),
                 "counter delta");
    snprintf(key, sizeof key, "p:clicks:0:%u", pages[row]);
    merge_buf(batch, key, &buf);
  }
  uint64_t total = n;
  check_status(rks_tally_delta(&total, 1, &buf), "tally delta");
  merge_buf(batch, "t:clicks", &buf);
  write_batch(db, batch);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: host_c DIR\n");
    return 2;
  }
  rocksdb_mergeoperator_t *op = rocksdb_mergeoperator_create(
      NULL, rks_rocksdb_destructor, rks_rocksdb_full_merge, rks_rocksdb_partial_merge,
      rks_rocksdb_delete_value, rks_rocksdb_name);
  rocksdb_options_t *opts = rocksdb_options_create();
  rocksdb_options_set_create_if_missing(opts, 1);
  rocksdb_options_set_merge_operator(opts, op);
  rocksdb_t *db = db_open(argv[1], opts);
  rocksdb_writebatch_t *batch = rocksdb_writebatch_create();

  rks_cms_layout layout;
  check_status(rks_cms_layout_make(3000, 5, 4096, &layout), "layout");
  printf("store\tpage_bytes\t4096\ncms.init\tclicks\t3000\t5\n");
  uint64_t state = 88172645463325252ULL;
  char item[32];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 800; i++) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      snprintf(item, sizeof item, "user:%llu", (unsigned long long)(state % 300));
      if (state % 3 == 0) {
        printf("cms.query\tclicks\t%s\t%u\n", item, cms_query(db, layout, item));
      } else {
        uint32_t n = 1 + (uint32_t)(state >> 40) % 9;
        cms_incrby(db, batch, layout, item, n);
        printf("cms.incrby\tclicks\t%s\t%u\t%u\n", item, n, cms_query(db, layout, item));
      }
    }
    size_t len = 0;
    char *tally = get(db, "t:clicks", &len);
    uint64_t count = 0;
    check_status(rks_tally_get((const uint8_t *)tally, len, 0, &count), "tally get");
    rocksdb_free(tally);
    printf("cms.count\tclicks\t%llu\n", (unsigned long long)count);
    if (round == 0) {
      rocksdb_compact_range(db, NULL, 0, NULL, 0);
      printf("compact\n");
    } else {
      rocksdb_close(db);
      db = db_open(argv[1], opts);
      printf("reopen\n");
    }
  }
  printf("skipped\t%llu\n", (unsigned long long)rks_skipped_operands());
  rocksdb_writebatch_destroy(batch);
  rocksdb_close(db);
  rocksdb_options_destroy(opts);
  return 0;
}
