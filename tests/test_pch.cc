// The program that makes the tests' shared precompiled header
// (tests/CMakeLists.txt, bb_test_pch); it is never run.
int main() { return 0; }
