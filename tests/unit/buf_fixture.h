/* SPDX-License-Identifier: GPL-2.0-only */
/* A cmocka fixture the tests of text built in a jw_buf share: each test's own, empty buffer. */
#ifndef JW_TEST_BUF_FIXTURE_H
#define JW_TEST_BUF_FIXTURE_H

#include <stdlib.h>

#include "base/jsonbuf.h"

static int buf_setup(void **state)
{
	struct jw_buf *b = malloc(sizeof(*b));

	if (!b)
		return -1;
	jw_buf_init(b);
	*state = b;
	return 0;
}

static int buf_teardown(void **state)
{
	jw_buf_free(*state);
	free(*state);
	return 0;
}

#endif
