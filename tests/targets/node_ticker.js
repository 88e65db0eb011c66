// SPDX-License-Identifier: GPL-2.0-only
// A node loop like jw_uv --light 50 --posted 1: a 50 ms ticker, onLight, that every second posts
// a 300 ms task, onPosted, with setImmediate, right after its tick. Each tick prints how late it
// ran by the program's own clock ("tick <n> late <ns>": from the previous tick plus 50 ms, the
// due time node gives an interval), each task "task <n> posted <start ns> <duration ns>".
'use strict';

const LIGHT_MS = Number(process.env.LIGHT_MS || 50);
const EVERY_MS = Number(process.env.EVERY_MS || 1000);
const BUSY_MS = Number(process.env.BUSY_MS || 300);

function nowNs() {
	return process.hrtime.bigint();	// CLOCK_MONOTONIC
}

function onPosted() {
	const start = nowNs();

	while (nowNs() - start < BigInt(BUSY_MS) * 1000000n)
		;
	console.log(`task ${++tasks} posted ${start} ${nowNs() - start}`);
}

let ticks = 0, tasks = 0, last = 0n;

setInterval(function onLight() {
	const now = nowNs();

	if (last) {
		const due = last + BigInt(LIGHT_MS) * 1000000n;

		console.log(`tick ${ticks} late ${now > due ? now - due : 0n}`);
	}
	last = now;
	if (++ticks % (EVERY_MS / LIGHT_MS) === 0)
		setImmediate(onPosted);
}, LIGHT_MS);
console.log(`ready ${process.pid}`);
