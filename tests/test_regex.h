// Regular-expression checks of a command's output for the tests, on POSIX
// <regex.h> (extended syntax) rather than <regex>: std::regex's templates
// took 9 s of one test's compile with clang and ASan, 3 s with g++.
// Patterns are written as for std::regex's ECMAScript grammar, of which they
// may use groups, alternatives, bracket expressions, `+ * ?`, escaped
// punctuation, and \d, \s and \n (translated here to [0-9], [[:space:]] and
// a newline). Matching is POSIX leftmost-longest, which agrees with
// ECMAScript for such patterns whose groups end at a literal.
//
// Thread-safety: pure functions.
#ifndef BLOCKBLOOM_TESTS_TEST_REGEX_H_
#define BLOCKBLOOM_TESTS_TEST_REGEX_H_

#include <regex.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace blockbloom_test {

// The text of each group of a match: [0] the whole match, [i] group i
// ("" for a group that did not take part).
class RegexGroups {
 public:
  const std::string& operator[](size_t i) const { return groups_.at(i); }
  size_t size() const { return groups_.size(); }

 private:
  friend bool RegexSearch(const std::string&, const std::string&, RegexGroups*);
  std::vector<std::string> groups_;
};

// The ECMAScript escapes above in POSIX extended syntax.
inline std::string PosixPattern(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '\\' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char next = pattern[++i];
    if (next == 'd') {
      out += "[0-9]";
    } else if (next == 's') {
      out += "[[:space:]]";
    } else if (next == 'n') {
      out += '\n';
    } else {
      out += '\\';
      out += next;
    }
  }
  return out;
}

// Whether `pattern` matches somewhere in `text`; the first match's groups
// go to *groups. A pattern regcomp rejects throws std::invalid_argument (a
// bug in the test, not a failed check).
inline bool RegexSearch(const std::string& text, const std::string& pattern,
                        RegexGroups* groups = nullptr) {
  regex_t re;
  if (regcomp(&re, PosixPattern(pattern).c_str(), REG_EXTENDED) != 0) {
    throw std::invalid_argument("bad regular expression: " + pattern);
  }
  std::vector<regmatch_t> at(re.re_nsub + 1);
  const bool found = regexec(&re, text.c_str(), at.size(), at.data(), 0) == 0;
  regfree(&re);
  if (found && groups != nullptr) {
    groups->groups_.clear();
    for (const regmatch_t& g : at) {
      groups->groups_.push_back(g.rm_so < 0 ? std::string()
                                            : text.substr(static_cast<size_t>(g.rm_so),
                                                          static_cast<size_t>(g.rm_eo - g.rm_so)));
    }
  }
  return found;
}

// Whether `pattern` matches the whole of `text`.
inline bool RegexMatchWhole(const std::string& text, const std::string& pattern) {
  return RegexSearch(text, "^(" + pattern + ")$");
}

}  // namespace blockbloom_test

#endif  // BLOCKBLOOM_TESTS_TEST_REGEX_H_
