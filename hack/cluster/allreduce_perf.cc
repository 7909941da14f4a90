// An MPI all-reduce benchmark in the shape of nccl-tests' all_reduce_perf, for the test
// cluster's workload image (images.sh builds it with Debian's mpicxx): the VM nodes have no GPU,
// so NCCL cannot run there, but the job's shape (ranks on several nodes, one all-reduce over
// message sizes, algorithm and bus bandwidth, every result checked) is the same.
//
//   allreduce_perf [-b MIN_BYTES] [-e MAX_BYTES] [-f FACTOR] [-n ITERS] [-w WARMUP] [-T SECONDS]
//                  [-S STOP_FILE]
//
// Sizes run from MIN to MAX, multiplied by FACTOR; each size is timed over ITERS all-reduces of
// float sums after WARMUP untimed ones, the slowest rank's time counting. Rank r fills element i
// with (r + 1) * (i % 7 + 1), small integers whose float sums are exact, so every element of the
// result is checked against n (n + 1) / 2 * (i % 7 + 1); #wrong counts the mismatches on all
// ranks. As nccl-tests defines them: algbw = bytes / time, busbw = algbw * 2 (n - 1) / n (what
// each rank's link carries in a ring all-reduce), in GB/s of 10^9 bytes.
//
// -T: after the table, keep all-reducing MAX_BYTES for SECONDS more (checked too), announced by
// a "# soak:" line first, so that a monitor sampling the ranks' counters sees steady traffic.
// -S: the soak also ends as soon as STOP_FILE exists where rank 0 runs: the monitor says when it
// has seen enough, and SECONDS is only the bound (a fixed length would race a slow monitor).
//
// Rank 0 prints the table, then "# Avg bus bandwidth : X" and "# wrong results : N" (the lines
// the cluster test reads). Exit 0 when every result was right, 1 when one was not, 2 on bad
// arguments.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  int64_t min_bytes = 8;
  int64_t max_bytes = 1 << 20;
  int64_t factor = 2;
  int iters = 20;
  int warmup = 5;
  int soak_seconds = 0;
  std::string stop_file{};
};

// A decimal count with an optional K, M or G (powers of 1024, as nccl-tests reads -b and -e).
bool parseSize(const char* text, int64_t& out) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || v < 0) return false;
  int64_t scale = 1;
  if (*end == 'K' || *end == 'k') scale = 1 << 10;
  if (*end == 'M' || *end == 'm') scale = 1 << 20;
  if (*end == 'G' || *end == 'g') scale = 1 << 30;
  if (scale != 1) ++end;
  if (*end != '\0' || v > (int64_t{1} << 34) / scale) return false;
  out = v * scale;
  return true;
}

bool parseOptions(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc) return false;
    const char* flag = argv[i];
    const char* value = argv[++i];
    if (std::strcmp(flag, "-S") == 0) {
      o.stop_file = value;
      continue;
    }
    int64_t v = 0;
    if (!parseSize(value, v)) return false;
    if (std::strcmp(flag, "-b") == 0) {
      o.min_bytes = v;
    } else if (std::strcmp(flag, "-e") == 0) {
      o.max_bytes = v;
    } else if (std::strcmp(flag, "-f") == 0) {
      o.factor = v;
    } else if (std::strcmp(flag, "-n") == 0 && v <= 100000) {
      o.iters = static_cast<int>(v);
    } else if (std::strcmp(flag, "-w") == 0 && v <= 100000) {
      o.warmup = static_cast<int>(v);
    } else if (std::strcmp(flag, "-T") == 0 && v <= 3600) {
      o.soak_seconds = static_cast<int>(v);
    } else {
      return false;
    }
  }
  return o.min_bytes >= 4 && o.max_bytes >= o.min_bytes && o.factor >= 2 && o.iters >= 1 &&
         o.max_bytes <= (int64_t{1} << 30);
}

bool stopAsked(const Options& o) {
  return !o.stop_file.empty() && access(o.stop_file.c_str(), F_OK) == 0;
}

float valueOf(int rank, int64_t i) {
  return static_cast<float>((rank + 1) * static_cast<int>(i % 7 + 1));
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options o;
  if (!parseOptions(argc, argv, o)) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "usage: allreduce_perf [-b MIN_BYTES] [-e MAX_BYTES] [-f FACTOR] [-n ITERS] "
                   "[-w WARMUP] [-T SECONDS] [-S STOP_FILE] (sizes 4 bytes to 1G, K/M/G suffixes; "
                   "factor >= 2)\n");
    }
    MPI_Finalize();
    return 2;
  }
  const auto max_count = static_cast<size_t>(o.max_bytes / 4);
  std::vector<float> send(max_count);
  std::vector<float> recv(max_count);
  for (size_t i = 0; i < max_count; ++i) send[i] = valueOf(rank, static_cast<int64_t>(i));
  const double ring = 2.0 * (ranks - 1) / ranks;
  const float sum_of_ranks = static_cast<float>(ranks * (ranks + 1) / 2);

  // The mismatches of the first `count` results, summed over the ranks.
  const auto wrongOnAllRanks = [&](int count) {
    long long wrong = 0;
    for (int i = 0; i < count; ++i) {
      if (recv[static_cast<size_t>(i)] != sum_of_ranks * valueOf(0, i)) ++wrong;
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return wrong;
  };

  if (rank == 0) {
    std::printf("# allreduce_perf: %d ranks, %d iterations after %d warm-up\n", ranks, o.iters,
                o.warmup);
    std::printf("#%12s %14s %9s %7s %11s %8s %8s %7s\n", "size", "count", "type", "redop", "time",
                "algbw", "busbw", "#wrong");
    std::printf("#%12s %14s %9s %7s %11s %8s %8s %7s\n", "(B)", "(elements)", "", "", "(us)",
                "(GB/s)", "(GB/s)", "");
  }
  double busbw_sum = 0;
  int sizes = 0;
  long long wrong_total = 0;
  for (int64_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
    const int count = static_cast<int>(bytes / 4);
    for (int w = 0; w < o.warmup; ++w) {
      MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    std::fill(recv.begin(), recv.begin() + count, 0.0F);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int it = 0; it < o.iters; ++it) {
      MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double elapsed = MPI_Wtime() - t0;
    MPI_Allreduce(MPI_IN_PLACE, &elapsed, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const long long wrong = wrongOnAllRanks(count);
    wrong_total += wrong;
    const double seconds = elapsed / o.iters;
    const double algbw = static_cast<double>(count) * 4 / seconds / 1e9;
    busbw_sum += algbw * ring;
    ++sizes;
    if (rank == 0) {
      std::printf(" %12lld %14d %9s %7s %11.1f %8.4f %8.4f %7lld\n",
                  static_cast<long long>(count) * 4, count, "float", "sum", seconds * 1e6, algbw,
                  algbw * ring, wrong);
    }
    if (bytes > o.max_bytes / o.factor) break;
  }
  if (o.soak_seconds > 0) {
    const int count = static_cast<int>(max_count);
    if (rank == 0) {
      std::printf("# soak: %d s of %lld-byte all-reduces\n", o.soak_seconds,
                  static_cast<long long>(count) * 4);
      std::fflush(stdout);
    }
    // Rank 0's clock decides, so that every rank runs the same number of all-reduces.
    const double until = MPI_Wtime() + o.soak_seconds;
    int more = 1;
    long long soaked = 0;
    while (more != 0) {
      MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      wrong_total += wrongOnAllRanks(count);
      ++soaked;
      more = rank != 0 || (MPI_Wtime() < until && !stopAsked(o)) ? 1 : 0;
      MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (rank == 0) std::printf("# soak: %lld all-reduces\n", soaked);
  }
  if (rank == 0) {
    std::printf("# Avg bus bandwidth : %.4f\n", busbw_sum / sizes);
    std::printf("# wrong results : %lld\n", wrong_total);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return wrong_total == 0 ? 0 : 1;
}
