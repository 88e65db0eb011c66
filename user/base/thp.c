// SPDX-License-Identifier: GPL-2.0-only
#include <sys/prctl.h>

#include "base/thp.h"

#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#define PR_GET_THP_DISABLE 42
#endif

/* What this process inherited: 1 off already, 0 on, -1 not known (nothing to restore). */
static int inherited = -1;

void jw_thp_keep_out(void)
{
	int was = prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);

	if (was < 0 || prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		return;
	inherited = was;
}

void jw_thp_restore(void)
{
	if (inherited == 0)
		prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
}
