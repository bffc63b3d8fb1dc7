// The test hosts' database: a RocksDB with one column family, "sketches", that holds
// metadata and pages under the host's own keys, with rocksketch's merge operator
// registered through rocksketch.hpp.
#ifndef ROCKSKETCH_TEST_HOST_DB_HPP
#define ROCKSKETCH_TEST_HOST_DB_HPP

#include <rocksdb/db.h>
#include <rocksdb/version.h>
#include <rocksdb/write_batch.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rocksketch.hpp"

namespace host {

inline void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "host: %s failed\n", what);
    std::exit(2);
  }
}

inline void Check(rks_status s, const char* what) {
  if (s != RKS_OK) {
    std::fprintf(stderr, "host: %s: %s\n", what, rks_status_message(s));
    std::exit(2);
  }
}

inline void Check(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) {
    std::fprintf(stderr, "host: %s: %s\n", what, s.ToString().c_str());
    std::exit(2);
  }
}

inline const uint8_t* Bytes(const std::string& s) {
  return reinterpret_cast<const uint8_t*>(s.data());
}

// The host's database: one column family, "sketches", holds metadata and pages.
class Host {
 public:
  explicit Host(std::string dir) : dir_(std::move(dir)) { Open(); }
  ~Host() { Close(); }

  void Open() {
    rocksdb::DBOptions db;
    db.create_if_missing = true;
    db.create_missing_column_families = true;
    rocksdb::ColumnFamilyOptions sketches;
    sketches.merge_operator = std::make_shared<rocksketch::MergeOperator>();
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
        {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
        {"sketches", sketches}};
    // RocksDB 9.11 added an Open that fills a unique_ptr, and later removed the old one.
#if ROCKSDB_MAJOR > 9 || (ROCKSDB_MAJOR == 9 && ROCKSDB_MINOR >= 11)
    Check(rocksdb::DB::Open(db, dir_, cfs, &handles_, &db_), "open");
#else
    rocksdb::DB* raw = nullptr;
    Check(rocksdb::DB::Open(db, dir_, cfs, &handles_, &raw), "open");
    db_.reset(raw);
#endif
  }

  void Close() {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    handles_.clear();
    db_.reset();
  }

  void Reopen() { Close(); Open(); }
  void Flush() { Check(db_->Flush(rocksdb::FlushOptions(), cf()), "flush"); }
  void Compact() {
    Check(db_->CompactRange(rocksdb::CompactRangeOptions(), cf(), nullptr, nullptr),
          "compact");
  }

  std::optional<std::string> Get(const std::string& key) {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf(), key, &value);
    if (s.IsNotFound()) return std::nullopt;
    Check(s, "get");
    return value;
  }

  void Write(rocksdb::WriteBatch* batch) { Check(db_->Write(rocksdb::WriteOptions(), batch), "write"); }
  rocksdb::ColumnFamilyHandle* cf() { return handles_[1]; }
  rocksdb::DB* db() { return db_.get(); }

 private:
  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

inline std::string PageKey(const std::string& name, uint32_t sub, uint32_t page) {
  return "p:" + name + ":" + std::to_string(sub) + ":" + std::to_string(page);
}
inline std::string TallyKey(const std::string& name) { return "t:" + name; }

// Sub-filters in a chain: "m:NAME" holds the count once the chain grows.
inline uint32_t ChainLength(Host& host, const std::string& name) {
  auto meta = host.Get("m:" + name);
  return meta ? static_cast<uint32_t>(std::stoul(*meta)) : 1;
}

inline uint64_t TallySlot(Host& host, const std::string& name, uint32_t slot) {
  auto page = host.Get(TallyKey(name));
  uint64_t value = 0;
  Check(rks_tally_get(page ? Bytes(*page) : nullptr, page ? page->size() : 0, slot, &value),
        "tally get");
  return value;
}

inline void AddTally(rocksdb::WriteBatch* batch, Host& host, const std::string& name,
              std::vector<uint64_t> adds) {
  rocksketch::Operand op;
  Check(rks_tally_delta(adds.data(), adds.size(), op.out()), "tally delta");
  batch->Merge(host.cf(), TallyKey(name), op.slice());
}

}  // namespace host

#endif  // ROCKSKETCH_TEST_HOST_DB_HPP
