/* SPDX-License-Identifier: MIT */
/* Stand-in for the C++ variant when no C++ compiler was found: an all-zero
 * layout tells test_mixed_tu to skip the C++ checks and thread. */
#include "mixed_tu.h"

#include <string.h>

void mixed_cxx_layout(struct mixed_layout *out)
{
	memset(out, 0, sizeof(*out));
}

void mixed_cxx_init(struct mixed_shared *s)
{
	(void)s;
}

void mixed_cxx_run(struct mixed_shared *s, unsigned int index, unsigned int iters)
{
	(void)s;
	(void)index;
	(void)iters;
}

const char *mixed_cxx_initializer_mismatch(void)
{
	return NULL;
}
