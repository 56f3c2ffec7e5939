// The line-oriented input files of waypoint-route (route tables, request lists): numbering,
// trimming, and which lines carry content.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace waypoint::route_tool {

// One content line of a file. `number` counts every line of the file from 1, blank and
// comment lines included, so that messages point at the line an editor shows.
struct source_line {
  std::size_t number = 0;
  std::string text;        // without leading and trailing blanks (space, tab, CR, LF, FF, VT)
  std::size_t indent = 0;  // bytes of leading blanks removed, to place a column in the file
};

// `raw` without its leading and trailing blanks; `indent` receives the leading count.
std::string_view trim_blanks(std::string_view raw, std::size_t& indent);

// True for a line that carries nothing: blank, or a comment whose first non-blank byte is '#'.
bool is_blank_or_comment(std::string_view trimmed);

// Reads the content lines of a stream one at a time, so that requests can be answered as
// they arrive. A UTF-8 byte-order mark at the start of the first line is dropped.
class content_line_reader {
 public:
  explicit content_line_reader(std::istream& in) : in_(in) {}
  // The next content line; false at the end of the stream.
  bool next(source_line& line);

 private:
  std::istream& in_;
  std::size_t number_ = 0;
  std::string raw_;
};

std::vector<source_line> read_content_lines(std::istream& in);

// The content lines of the file at `path`; throws tool_error when it cannot be read.
std::vector<source_line> read_content_file(const std::string& path);

}  // namespace waypoint::route_tool
