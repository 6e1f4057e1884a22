/* SPDX-License-Identifier: MIT */
/* mixed_tu.c built as C++17: the `cxx` variant of test_mixed_tu. */
#include "mixed_tu.c"
