# SPDX-License-Identifier: GPL-2.0-only
# The nginx test's on-demand jank: GET /jank?ms=N busy-loops N ms of the worker's CPU time inside
# the worker (perl runs in the worker's event loop), then answers with what it measured itself,
# like jw_target does: "task 1 busy <begin_ns> <duration_ns>" (CLOCK_MONOTONIC: its wall time), and
# on a second line "pid <worker>". CPU time, not wall time: on a busy machine a loop on the wall
# clock could spend its N ms waiting for a CPU and run 2 ms, with no sample to name its handler.
package jank;
use strict;
use nginx;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC CLOCK_THREAD_CPUTIME_ID);

sub handler {
    my $r = shift;
    my ($ms) = ($r->args // '') =~ /ms=(\d+)/;
    $ms //= 300;
    my $begin = clock_gettime(CLOCK_MONOTONIC);
    my $cpu = clock_gettime(CLOCK_THREAD_CPUTIME_ID);
    1 while clock_gettime(CLOCK_THREAD_CPUTIME_ID) - $cpu < $ms / 1000;
    my $dur = clock_gettime(CLOCK_MONOTONIC) - $begin;
    $r->send_http_header("text/plain");
    $r->print(sprintf("task 1 busy %.0f %.0f\npid %d\n", $begin * 1e9, $dur * 1e9, $$));
    return OK;
}

1;
