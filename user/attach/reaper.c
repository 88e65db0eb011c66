// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "attach/reaper.h"

struct item {
	struct jw_link link;
	uint32_t tag;
};

struct jw_reaper {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool started;
	bool stop;
	struct item *queue;	/* a ring of cap items: head is the next to destroy */
	size_t head, n, cap;
	uint32_t n_tags;
	uint32_t *pending;	/* by tag: links queued or being destroyed */
	uint64_t done, done_ns;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void *reap(void *arg)
{
	struct jw_reaper *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct item it;
		uint64_t t0;

		while (!r->n && !r->stop)
			pthread_cond_wait(&r->wake, &r->lock);
		if (!r->n)
			break;
		it = r->queue[r->head];
		r->head = (r->head + 1) % r->cap;
		r->n--;
		pthread_mutex_unlock(&r->lock);
		t0 = mono_ns();
		jw_link_destroy(it.link);
		t0 = mono_ns() - t0;
		pthread_mutex_lock(&r->lock);
		r->pending[it.tag]--;
		r->done++;
		r->done_ns += t0;
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

struct jw_reaper *jw_reaper__new(uint32_t n_tags)
{
	struct jw_reaper *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->pending = calloc(n_tags ? n_tags : 1, sizeof(*r->pending));
	if (!r->pending) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->n_tags = n_tags;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->wake, NULL);
	/* Without the thread, links are destroyed where they are handed over. */
	r->started = pthread_create(&r->thread, NULL, reap, r) == 0;
	return r;
}

/* Makes room for one more item. 0 or -ENOMEM. Under the lock. */
static int grow(struct jw_reaper *r)
{
	size_t cap = r->cap ? 2 * r->cap : 64, i;
	struct item *q;

	if (r->n < r->cap)
		return 0;
	q = malloc(cap * sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (i = 0; i < r->n; i++)
		q[i] = r->queue[(r->head + i) % r->cap];
	free(r->queue);
	r->queue = q;
	r->head = 0;
	r->cap = cap;
	return 0;
}

void jw_reaper__add(struct jw_reaper *r, struct jw_link link, uint32_t tag)
{
	if (!link.bpf && link.fd < 0)
		return;
	if (tag >= r->n_tags)
		tag = 0;
	pthread_mutex_lock(&r->lock);
	if (!r->started || grow(r)) {
		pthread_mutex_unlock(&r->lock);
		jw_link_destroy(link);
		return;
	}
	r->queue[(r->head + r->n) % r->cap] = (struct item){ link, tag };
	r->n++;
	r->pending[tag]++;
	pthread_cond_signal(&r->wake);
	pthread_mutex_unlock(&r->lock);
}

bool jw_reaper__busy(struct jw_reaper *r, uint32_t tag)
{
	bool busy;

	if (tag >= r->n_tags)
		return false;
	pthread_mutex_lock(&r->lock);
	busy = r->pending[tag] > 0;
	pthread_mutex_unlock(&r->lock);
	return busy;
}

void jw_reaper__stats(struct jw_reaper *r, uint64_t *links, uint64_t *ns)
{
	pthread_mutex_lock(&r->lock);
	*links = r->done;
	*ns = r->done_ns;
	pthread_mutex_unlock(&r->lock);
}

void jw_reaper__free(struct jw_reaper *r)
{
	if (!r)
		return;
	if (r->started) {
		pthread_mutex_lock(&r->lock);
		r->stop = true;
		pthread_cond_signal(&r->wake);
		pthread_mutex_unlock(&r->lock);
		pthread_join(r->thread, NULL);
	}
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->wake);
	free(r->queue);
	free(r->pending);
	free(r);
}
