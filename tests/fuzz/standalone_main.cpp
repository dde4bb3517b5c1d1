// Driver for fuzz targets in builds without libFuzzer (gcc): runs every file of the seed corpus,
// then a fixed number of deterministic mutations of them (bit flips, byte changes, truncations,
// splices). Usage: <fuzzer> CORPUS_DIR [MUTATIONS]. A crash or sanitizer report fails the test.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS]\n", argv[0]);
    return 2;
  }
  std::vector<std::vector<uint8_t>> corpus;
  for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
    std::ifstream in(entry.path(), std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "empty corpus in %s\n", argv[1]);
    return 2;
  }
  for (const auto& input : corpus) LLVMFuzzerTestOneInput(input.data(), input.size());

  const long mutations = argc > 2 ? std::atol(argv[2]) : 10000;
  std::mt19937_64 rng(0x5eed);
  for (long i = 0; i < mutations; ++i) {
    std::vector<uint8_t> buf = corpus[rng() % corpus.size()];
    const int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits && !buf.empty(); ++e) {
      const size_t at = rng() % buf.size();
      switch (rng() % 5) {
        case 0:
          buf[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
          break;
        case 1:
          buf[at] = static_cast<uint8_t>(rng());
          break;
        case 2:
          buf[at] = (rng() & 1) ? 0xff : 0x00;
          break;
        case 3:
          buf.resize(at);
          break;
        case 4: {
          const auto& other = corpus[rng() % corpus.size()];
          if (!other.empty()) {
            const size_t from = rng() % other.size();
            buf.insert(buf.begin() + static_cast<long>(at), other.begin() + static_cast<long>(from),
                       other.end());
          }
          break;
        }
      }
    }
    LLVMFuzzerTestOneInput(buf.data(), buf.size());
  }
  std::printf("%zu corpus inputs and %ld mutations ran clean\n", corpus.size(), mutations);
  return 0;
}
