// A shell command run from a test (curl, openssl, a python or node client), its standard
// output and error read as they come: one helper for every test that drives a real client.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace waypoint::testing {

struct command_result {
  int status = -1;     // the exit status, or -1 when it did not exit normally
  std::string output;  // stdout and stderr, less the lines on_line took
};

// Runs `command` through /bin/sh with stderr joined to stdout. `on_line`, when given, sees
// each line (its '\n' included) as it arrives, before the command ends, and returns true to
// take it out of `output`: how a test answers a client that prints "ready".
inline command_result run_command(const std::string& command,
                                  const std::function<bool(std::string_view line)>& on_line = {}) {
  std::FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  command_result result;
  char line[4096];
  while (std::fgets(line, sizeof line, pipe))
    if (!on_line || !on_line(line)) result.output += line;
  int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace waypoint::testing
