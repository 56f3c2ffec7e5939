// Reading route tables and request lists.
#include "source_lines.hpp"

#include "tool_error.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace waypoint::route_tool {
namespace {

constexpr std::string_view blanks = " \t\r\n\f\v";
constexpr std::string_view byte_order_mark = "\xEF\xBB\xBF";

}  // namespace

std::string_view trim_blanks(std::string_view raw, std::size_t& indent) {
  std::size_t first = raw.find_first_not_of(blanks);
  if (first == std::string_view::npos) {
    indent = raw.size();
    return {};
  }
  std::size_t last = raw.find_last_not_of(blanks);
  indent = first;
  return raw.substr(first, last - first + 1);
}

bool is_blank_or_comment(std::string_view trimmed) {
  return trimmed.empty() || trimmed.front() == '#';
}

bool content_line_reader::next(source_line& line) {
  while (std::getline(in_, raw_)) {
    std::string_view view = raw_;
    if (++number_ == 1 && view.starts_with(byte_order_mark))
      view.remove_prefix(byte_order_mark.size());
    std::size_t indent = 0;
    std::string_view text = trim_blanks(view, indent);
    if (is_blank_or_comment(text)) continue;
    line = {number_, std::string(text), indent};
    return true;
  }
  return false;
}

std::vector<source_line> read_content_lines(std::istream& in) {
  std::vector<source_line> lines;
  content_line_reader reader(in);
  for (source_line line; reader.next(line);) lines.push_back(std::move(line));
  return lines;
}

std::vector<source_line> read_content_file(const std::string& path) {
  // A directory opens as a stream on Linux and then reads as empty: refuse it by name.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw tool_error("cannot read " + path + ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tool_error("cannot read " + path + ": " + std::strerror(errno));
  std::vector<source_line> lines = read_content_lines(in);
  if (in.bad()) throw tool_error("cannot read " + path + ": read error");
  return lines;
}

}  // namespace waypoint::route_tool
