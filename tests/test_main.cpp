// The main of every test program: gives each test process a temporary
// directory of its own (ctest -j runs tests in parallel processes, and tests
// write files under testing::TempDir()), removed at exit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("skiff-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  setenv("TEST_TMPDIR", (dir.string() + "/").c_str(), 1);
  testing::InitGoogleTest(&argc, argv);
  const int result = RUN_ALL_TESTS();
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return result;
}
