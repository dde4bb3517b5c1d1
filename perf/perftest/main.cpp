// pubsub-perftest entry point: parse the RTI-style flags and run one side.
#include <cstdio>
#include <string_view>

#include "perftest.hpp"

int main(int argc, char** argv) {
  if (argc == 2 &&
      (std::string_view(argv[1]) == "--version" || std::string_view(argv[1]) == "-version")) {
    std::printf("pubsub-perftest %s\n", PUBSUB_VERSION);
    return 0;
  }
  perftest::Options o;
  std::string error;
  if (!perftest::parse_options(argc, argv, o, error)) {
    if (error.empty()) {  // -help, -h, --help: asked for, so on stdout and exit 0
      std::fputs(perftest::usage().c_str(), stdout);
      return 0;
    }
    std::fprintf(stderr, "pubsub-perftest: %s\n", error.c_str());
    std::fputs(perftest::usage().c_str(), stderr);
    return 2;
  }
  if (o.transport == perftest::TransportKind::kIntra) return perftest::run_intra(o);
  return o.pub ? perftest::run_publisher(o) : perftest::run_subscriber(o);
}
