// A C++ host database: its own RocksDB (whatever version it was built against), its
// own key layout (Kvrocks-style: metadata per structure, a subkey per page),
// rocksketch's merge operator through rocksketch.hpp, and operands and answers through
// the C ABI. It runs a fixed workload of count-min increments, Bloom adds and cuckoo
// inserts and deletes, with a flush, a compaction and a reopen between rounds, and
// prints every operation with its answer; capi/tests/foreign_host.rs replays the
// transcript through the Rust library and compares every answer.
//
// Usage: host DIR          (the workload; the transcript on stdout)
//        host DIR bench N  (reads of pages of N operands; merges/s on stdout)
#include <chrono>
#include <map>

#include "host_db.hpp"

using namespace host;

namespace {

// A count-min sketch: counters in pages "p:NAME:0:PAGE", the total in "t:NAME".
struct Cms {
  std::string name;
  rks_cms_layout layout;

  uint32_t IncrBy(Host& host, const std::string& item, uint32_t n) {
    std::vector<uint32_t> pages(layout.depth), offsets(layout.depth);
    Check(rks_cms_locate(layout, Bytes(item), item.size(), pages.data(), offsets.data(),
                         pages.size()),
          "cms locate");
    std::map<uint32_t, std::vector<uint32_t>> by_page;
    for (size_t row = 0; row < pages.size(); row++) by_page[pages[row]].push_back(offsets[row]);
    rocksdb::WriteBatch batch;
    for (auto& [page, offs] : by_page) {
      std::vector<uint32_t> adds(offs.size(), n);
      rocksketch::Operand op;
      Check(rks_counter_delta(rks_cms_page_len(layout, page), offs.data(), adds.data(),
                              offs.size(), op.out()),
            "counter delta");
      batch.Merge(host.cf(), PageKey(name, 0, page), op.slice());
    }
    AddTally(&batch, host, name, {n});
    host.Write(&batch);
    return Query(host, item);
  }

  uint32_t Query(Host& host, const std::string& item) {
    std::vector<uint32_t> pages(layout.depth), offsets(layout.depth);
    Check(rks_cms_locate(layout, Bytes(item), item.size(), pages.data(), offsets.data(),
                         pages.size()),
          "cms locate");
    std::vector<std::optional<std::string>> values;
    std::vector<const uint8_t*> ptrs;
    std::vector<size_t> lens;
    for (uint32_t page : pages) values.push_back(host.Get(PageKey(name, 0, page)));
    for (auto& v : values) {
      ptrs.push_back(v ? Bytes(*v) : nullptr);
      lens.push_back(v ? v->size() : 0);
    }
    uint32_t estimate = 0;
    Check(rks_cms_query(layout, Bytes(item), item.size(), ptrs.data(), lens.data(),
                        ptrs.size(), &estimate),
          "cms query");
    return estimate;
  }

  uint64_t Count(Host& host) { return TallySlot(host, name, 0); }
};

// A scalable Bloom filter: sub-filter I's pages under "p:NAME:I:PAGE", its item count
// in slot I of "t:NAME", the chain's length in "m:NAME".
struct Bloom {
  std::string name;
  double error;
  uint64_t capacity;
  uint32_t expansion;

  uint32_t Filters(Host& host) { return ChainLength(host, name); }

  rks_bloom_sub Sub(uint32_t index) {
    rks_bloom_sub sub;
    Check(rks_bloom_sub_make(error, capacity, expansion, RKS_DEFAULT_PAGE_BYTES, index, &sub),
          "bloom sub");
    return sub;
  }

  bool InSub(Host& host, uint32_t index, const std::string& item) {
    rks_bloom_sub sub = Sub(index);
    uint32_t page = 0;
    std::vector<uint32_t> bits(sub.hashes);
    Check(rks_bloom_locate(sub, Bytes(item), item.size(), &page, bits.data(), bits.size()),
          "bloom locate");
    auto value = host.Get(PageKey(name, index, page));
    bool set = false;
    Check(rks_bits_test(value ? Bytes(*value) : nullptr, value ? value->size() : 0,
                        sub.page_bits, bits.data(), bits.size(), &set),
          "bits test");
    return set;
  }

  bool Exists(Host& host, const std::string& item) {
    uint32_t filters = Filters(host);
    for (uint32_t i = 0; i < filters; i++) {
      if (InSub(host, i, item)) return true;
    }
    return false;
  }

  // BF.ADD: 0 if present; otherwise set the bits in the newest sub-filter, growing the
  // chain first if the newest holds its capacity.
  bool Add(Host& host, const std::string& item) {
    if (Exists(host, item)) return false;
    uint32_t filters = Filters(host);
    rocksdb::WriteBatch batch;
    if (TallySlot(host, name, filters - 1) >= Sub(filters - 1).capacity) {
      Check(expansion != 0, "add to a full non-scaling filter");
      filters++;
      batch.Put(host.cf(), "m:" + name, std::to_string(filters));
    }
    uint32_t newest = filters - 1;
    rks_bloom_sub sub = Sub(newest);
    uint32_t page = 0;
    std::vector<uint32_t> bits(sub.hashes);
    Check(rks_bloom_locate(sub, Bytes(item), item.size(), &page, bits.data(), bits.size()),
          "bloom locate");
    rocksketch::Operand op;
    Check(rks_bit_delta(sub.page_bits, bits.data(), bits.size(), op.out()), "bit delta");
    batch.Merge(host.cf(), PageKey(name, newest, page), op.slice());
    std::vector<uint64_t> adds(newest + 1, 0);
    adds[newest] = 1;
    AddTally(&batch, host, name, adds);
    host.Write(&batch);
    return true;
  }
};

// A scalable cuckoo filter, laid out as the Bloom filter is; slot 32 of the tally
// counts deletes.
struct Cuckoo {
  std::string name;
  rks_cuckoo_chain chain;

  uint32_t Filters(Host& host) { return ChainLength(host, name); }

  rks_cuckoo_sub Sub(uint32_t index) {
    rks_cuckoo_sub sub;
    Check(rks_cuckoo_sub_make(chain, index, &sub), "cuckoo sub");
    return sub;
  }

  // Copies of the item's fingerprint in sub-filter `index`, and where it falls there.
  uint32_t CountIn(Host& host, uint32_t index, const std::string& item, uint32_t* page,
                   uint32_t* bucket, uint16_t* fp) {
    rks_cuckoo_sub sub = Sub(index);
    Check(rks_cuckoo_locate(sub, Bytes(item), item.size(), page, bucket, fp), "locate");
    auto value = host.Get(PageKey(name, index, *page));
    uint32_t count = 0;
    Check(rks_fp_count(sub, value ? Bytes(*value) : nullptr, value ? value->size() : 0,
                       *bucket, *fp, &count),
          "fp count");
    return count;
  }

  uint64_t Count(Host& host, const std::string& item) {
    uint64_t total = 0;
    uint32_t page, bucket;
    uint16_t fp;
    for (uint32_t i = 0; i < Filters(host); i++) total += CountIn(host, i, item, &page, &bucket, &fp);
    return total;
  }

  // One insert or delete operand for sub-filter `index`, and the tally's change.
  void Write(Host& host, uint32_t index, rks_fp_op fp_op, std::vector<uint64_t> tally,
             rocksdb::WriteBatch* batch, uint32_t page) {
    rocksketch::Operand op;
    Check(rks_fp_ops(Sub(index), &fp_op, 1, op.out()), "fp ops");
    batch->Merge(host.cf(), PageKey(name, index, page), op.slice());
    AddTally(batch, host, name, std::move(tally));
    host.Write(batch);
  }

  // CF.ADD: a blind insert into the newest sub-filter, growing the chain first if the
  // newest holds its target.
  void Add(Host& host, const std::string& item) {
    uint32_t filters = Filters(host);
    rocksdb::WriteBatch batch;
    if (TallySlot(host, name, filters - 1) >= Sub(filters - 1).target) {
      Check(chain.expansion != 0, "add to a full non-scaling filter");
      filters++;
      batch.Put(host.cf(), "m:" + name, std::to_string(filters));
    }
    uint32_t newest = filters - 1, page, bucket;
    uint16_t fp;
    Check(rks_cuckoo_locate(Sub(newest), Bytes(item), item.size(), &page, &bucket, &fp),
          "locate");
    std::vector<uint64_t> tally(newest + 1, 0);
    tally[newest] = 1;
    Write(host, newest, rks_fp_op{bucket, fp, RKS_FP_INSERT}, tally, &batch, page);
  }

  // CF.DEL: from the newest sub-filter that holds the fingerprint.
  bool Del(Host& host, const std::string& item) {
    for (uint32_t i = Filters(host); i-- > 0;) {
      uint32_t page, bucket;
      uint16_t fp;
      if (CountIn(host, i, item, &page, &bucket, &fp) == 0) continue;
      std::vector<uint64_t> tally(33, 0);
      tally[i] = UINT64_MAX;  // -1, wrapping
      tally[32] = 1;
      rocksdb::WriteBatch batch;
      Write(host, i, rks_fp_op{bucket, fp, RKS_FP_DELETE}, tally, &batch, page);
      return true;
    }
    return false;
  }
};

uint64_t state = 0x2545F4914F6CDD1DULL;
uint64_t Next() {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

void Workload(Host& host) {
  Cms cms{"clicks", {}};
  Check(rks_cms_layout_make(2000, 7, RKS_DEFAULT_PAGE_BYTES, &cms.layout), "cms layout");
  Bloom bloom{"seen", 0.01, 200, 2};
  Cuckoo cuckoo{"members", {}};
  Check(rks_cuckoo_chain_make(100, 2, 2, 8, RKS_DEFAULT_PAGE_BYTES, &cuckoo.chain), "chain");
  std::printf("store\tpage_bytes\t%d\n", RKS_DEFAULT_PAGE_BYTES);
  std::printf("cms.init\tclicks\t2000\t7\nbf.reserve\tseen\t0.01\t200\t2\n");
  std::printf("cf.reserve\tmembers\t100\t2\t2\t8\n");
  const char* between[] = {"flush", "compact", "reopen", "none"};
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < 700; i++) {
      std::string item = "item:" + std::to_string(Next() % 500);
      switch (Next() % 8) {
        case 0: {
          uint32_t n = 1 + Next() % 5;
          std::printf("cms.incrby\tclicks\t%s\t%u\t%u\n", item.c_str(), n,
                      cms.IncrBy(host, item, n));
          break;
        }
        case 1: std::printf("cms.query\tclicks\t%s\t%u\n", item.c_str(), cms.Query(host, item)); break;
        case 2: std::printf("bf.add\tseen\t%s\t%d\n", item.c_str(), bloom.Add(host, item)); break;
        case 3: std::printf("bf.exists\tseen\t%s\t%d\n", item.c_str(), bloom.Exists(host, item)); break;
        case 4:
        case 5: cuckoo.Add(host, item); std::printf("cf.add\tmembers\t%s\n", item.c_str()); break;
        case 6: std::printf("cf.del\tmembers\t%s\t%d\n", item.c_str(), cuckoo.Del(host, item)); break;
        default:
          std::printf("cf.count\tmembers\t%s\t%llu\n", item.c_str(),
                      static_cast<unsigned long long>(cuckoo.Count(host, item)));
      }
    }
    std::printf("cms.count\tclicks\t%llu\n", static_cast<unsigned long long>(cms.Count(host)));
    std::string step = between[round];
    if (step == "flush") host.Flush();
    if (step == "compact") host.Compact();
    if (step == "reopen") host.Reopen();
    std::printf("%s\n", step.c_str());
  }
  for (int k = 0; k < 500; k++) {
    std::string item = "item:" + std::to_string(k);
    std::printf("cms.query\tclicks\t%s\t%u\n", item.c_str(), cms.Query(host, item));
    std::printf("bf.exists\tseen\t%s\t%d\n", item.c_str(), bloom.Exists(host, item));
    std::printf("cf.count\tmembers\t%s\t%llu\n", item.c_str(),
                static_cast<unsigned long long>(cuckoo.Count(host, item)));
  }
  std::printf("bf.filters\tseen\t%u\ncf.filters\tmembers\t%u\nskipped\t%llu\n",
              bloom.Filters(host), cuckoo.Filters(host),
              static_cast<unsigned long long>(rks_skipped_operands()));
}

// The boundary's cost, measured where the merge operator does the work: reads of
// pages whose operands all wait in the memtable (each read is one full merge). Phase
// "many": 16 pages of n/16 operands; "few": n/4 pages of 4 operands (the per-call cost).
// Operands are written before the clock starts; each phase reads its pages over and
// over for a second. Prints full merges and operands merged per second.
int Bench(Host& host, long n) {
  struct Phase { const char* name; long pages; };
  for (Phase phase : {Phase{"many", 16}, Phase{"few", n / 4}}) {
    for (long i = 0; i < n; i++) {
      uint32_t offset = Next() % 4096, add = 1;
      rocksketch::Operand op;
      Check(rks_counter_delta(4096, &offset, &add, 1, op.out()), "delta");
      Check(host.db()->Merge(rocksdb::WriteOptions(), host.cf(),
                             PageKey(phase.name, 0, i % phase.pages), op.slice()),
            "merge");
    }
    std::vector<std::string> keys;
    for (long page = 0; page < phase.pages; page++) keys.push_back(PageKey(phase.name, 0, page));
    long merges = 0;
    auto start = std::chrono::steady_clock::now();
    double elapsed = 0;
    std::string value;
    while (elapsed < 1.0) {
      for (const std::string& key : keys) {
        Check(host.db()->Get(rocksdb::ReadOptions(), host.cf(), key, &value), "read");
      }
      merges += phase.pages;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    std::printf("%s\t%ld\tmerges_per_s\t%.0f\toperands_per_s\t%.0f\n", phase.name, n,
                merges / elapsed, merges * (double(n) / phase.pages) / elapsed);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: host DIR [bench N]\n");
    return 2;
  }
  Host host(argv[1]);
  if (argc == 4 && std::string(argv[2]) == "bench") return Bench(host, std::atol(argv[3]));
  Workload(host);
  return 0;
}
