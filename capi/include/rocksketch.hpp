// rocksketch's merge operator for hosts that use RocksDB's C++ API: a header-only
// adapter over the C ABI in rocksketch.h. Link librocksketch_capi (static or shared)
// and register it on the column family that holds rocksketch's pages:
//
//     rocksdb::ColumnFamilyOptions cf;
//     cf.merge_operator = std::make_shared<rocksketch::MergeOperator>();
//
// It compiles against any RocksDB with FullMergeV2 and PartialMergeMulti (6.x on).
#ifndef ROCKSKETCH_HPP
#define ROCKSKETCH_HPP

#include <rocksdb/merge_operator.h>
#include <rocksdb/slice.h>

#include <deque>
#include <string>
#include <vector>

#include "rocksketch.h"

namespace rocksketch {

class MergeOperator : public rocksdb::MergeOperator {
 public:
  // The name rocksketch registers ("rocksketch.v1"): a database made by rocksketch's
  // own store opens with this operator, and the other way round.
  const char* Name() const override { return rks_rocksdb_name(nullptr); }

  // Never fails on bytes: an operand that does not decode is skipped, the page flagged
  // (readers get RKS_LOST_OPERANDS) and counted in rks_skipped_operands(). A false
  // return (which makes RocksDB stop writing) means a bug caught at the boundary.
  bool FullMergeV2(const MergeOperationInput& in,
                   MergeOperationOutput* out) const override {
    Operands ops(in.operand_list);
    const rocksdb::Slice* existing = in.existing_value;
    Sink sink{&out->new_value, false};
    rks_status status = rks_full_merge(
        existing ? Bytes(*existing) : nullptr, existing ? existing->size() : 0,
        existing != nullptr, ops.ptrs.data(), ops.lens.data(), ops.ptrs.size(),
        &AssignTo, &sink);
    return status == RKS_OK && !sink.failed;
  }

  // Combines a run of operands into one where they combine (counter deltas, bit
  // positions, fingerprint ops, ...); declines otherwise, which is always safe.
  bool PartialMergeMulti(const rocksdb::Slice& /*key*/,
                         const std::deque<rocksdb::Slice>& operand_list,
                         std::string* new_value,
                         rocksdb::Logger* /*logger*/) const override {
    Operands ops(operand_list);
    bool merged = false;
    Sink sink{new_value, false};
    rks_status status =
        rks_partial_merge(ops.ptrs.data(), ops.lens.data(), ops.ptrs.size(),
                          &AssignTo, &sink, &merged);
    return status == RKS_OK && merged && !sink.failed;
  }

 private:
  struct Operands {
    template <typename Slices>
    explicit Operands(const Slices& slices) {
      ptrs.reserve(slices.size());
      lens.reserve(slices.size());
      for (const rocksdb::Slice& s : slices) {
        ptrs.push_back(Bytes(s));
        lens.push_back(s.size());
      }
    }
    std::vector<const uint8_t*> ptrs;
    std::vector<size_t> lens;
  };

  static const uint8_t* Bytes(const rocksdb::Slice& s) {
    return reinterpret_cast<const uint8_t*>(s.data());
  }

  // Where a merged value goes. A C++ exception must not unwind through the Rust frames
  // that call the sink, so a failed copy (out of memory) is caught here and reported.
  struct Sink {
    std::string* value;
    bool failed;
  };

  static void AssignTo(void* ctx, const uint8_t* data, size_t len) noexcept {
    Sink* sink = static_cast<Sink*>(ctx);
    try {
      sink->value->assign(reinterpret_cast<const char*>(data), len);
    } catch (...) {
      sink->failed = true;
    }
  }
};

// Owns an operand made by the C ABI (an rks_buf) and releases it.
class Operand {
 public:
  Operand() = default;
  Operand(const Operand&) = delete;
  Operand& operator=(const Operand&) = delete;
  ~Operand() { rks_buf_free(&buf_); }
  rks_buf* out() { rks_buf_free(&buf_); return &buf_; }
  rocksdb::Slice slice() const {
    return rocksdb::Slice(reinterpret_cast<const char*>(buf_.data), buf_.len);
  }

 private:
  rks_buf buf_{nullptr, 0};
};

}  // namespace rocksketch

#endif  // ROCKSKETCH_HPP
