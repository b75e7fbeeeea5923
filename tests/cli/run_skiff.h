// Runs the skiff binary (SKIFF_BINARY) with arguments, capturing stdout,
// stderr and the exit code, for end-to-end command tests.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

namespace skiff::testing {

struct SkiffResult {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

inline SkiffResult run_skiff(const std::string& args) {
  const std::string err_path = ::testing::TempDir() + "/skiff_stderr_" +
                               ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt";
  const std::string cmd = std::string(SKIFF_BINARY) + " " + args + " 2>" + err_path;
  FILE* p = popen(cmd.c_str(), "r");
  EXPECT_NE(p, nullptr) << cmd;
  SkiffResult r;
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  r.err.assign(std::istreambuf_iterator<char>(err), {});
  return r;
}

}  // namespace skiff::testing
