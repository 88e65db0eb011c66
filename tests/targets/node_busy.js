// SPDX-License-Identifier: GPL-2.0-only
// A node event loop with a known slow task: every 700 ms a timer callback calls busyWork, which
// keeps the CPU for 300 ms. Run with --perf-basic-prof --interpreted-frames-native-stack so that
// jankwatch can name the JS frames. Prints "task <n> <start ms> <duration ms>" per slow task.
'use strict';

const BUSY_MS = Number(process.env.BUSY_MS || 300);
const EVERY_MS = Number(process.env.EVERY_MS || 700);

function busyWork(ms) {
	const end = Date.now() + ms;
	let spins = 0;

	while (Date.now() < end)
		spins++;
	return spins;
}

let n = 0;

setInterval(function onTick() {
	const start = performance.timeOrigin + performance.now();

	busyWork(BUSY_MS);
	const ms = performance.timeOrigin + performance.now() - start;
	console.log(`task ${n++} ${start.toFixed(3)} ${ms.toFixed(3)}`);
}, EVERY_MS);
console.log(`ready ${process.pid}`);
