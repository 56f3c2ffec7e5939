// Baseline of bench/compile/run: what any Beast server includes before a line of its own.
// The README's framework example is held to at most 2x this unit (issue 26).
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

int main() {}
