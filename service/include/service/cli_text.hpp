// Messages for command lines CLI11 refuses, shared by pubsub-recorder, its ctl and pubsub-replay.
#pragma once

#include <CLI/CLI.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace service {

// CLI11's message, except that arguments it did not expect are listed in the order given
// (CLI11 2.1 lists them backwards: "not expected: foo --exclude" for `--exclude foo`).
inline std::string cli_error_text(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return what;
  const size_t colon = what.find(": ");
  if (colon == std::string::npos) return what;
  std::vector<std::string> args;
  std::istringstream in(what.substr(colon + 2));
  for (std::string a; in >> a;) args.push_back(a);
  std::string out = args.size() == 1 ? "unexpected argument:" : "unexpected arguments:";
  for (auto it = args.rbegin(); it != args.rend(); ++it) out += " " + *it;
  return out;
}

// Prints a refused command line as "PROGRAM: message (see 'PROGRAM --help')" on stderr and
// returns `usage_status`; --help and --version go to stdout with status 0 (CLI11's exit()).
inline int cli_exit(CLI::App& app, const CLI::ParseError& e, const std::string& program,
                    int usage_status) {
  if (e.get_exit_code() == 0) return app.exit(e);
  std::cerr << program << ": " << cli_error_text(e) << " (see '" << program << " --help')\n";
  return usage_status;
}

}  // namespace service
