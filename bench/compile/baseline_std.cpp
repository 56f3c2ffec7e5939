// Baseline of bench/compile/run: the standard-library headers a small C++ program includes,
// and nothing else. The README's core example is held to at most 2x this unit (issue 26).
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

int main() {}
