#include <cstdio>
int main() { std::puts("skiff"); return 0; }
