/* SPDX-License-Identifier: MIT */
/*
 * kern_ipc.c - communication in the simulated kernel (see kern.h): pipes
 * (with futex waits when full or empty), SysV shared memory under its
 * semaphore, and the port table of the sockets.
 */
#include "kern_internal.h"
#include "lb_futex.h"
#include "lb_time.h"

#include <string.h>

/* ------------------------------------------------------------- pipes */

/*
 * Sleep until *event moves past `seen`, the way pipe_wait() sleeps on the
 * pipe's wait queue: the event word was read under the pipe mutex, so a
 * wake-up that happens after we dropped it changes the word and the futex
 * wait returns at once.  Bounded (20 ms) so a lost wake-up from a broken
 * lock costs time, never a hang; the stop flag ends the wait for good.
 */
static void pipe_sleep(struct aim_ctx *c, _Atomic uint32_t *event, uint32_t seen)
{
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	if (!aim_stopping(c->k))
		lb_futex_wait(event, seen, &ts);
}

static void pipe_wake(_Atomic uint32_t *event)
{
	lb_futex_wake(event, 1);
}

/*
 * The byte pattern: byte k of the stream is (uint8_t)k.  Written and
 * checked one contiguous stretch of the ring at a time, in loops the
 * compiler vectorises (a transfer costs about what the real copy does).
 */
static void ring_fill(uint8_t *buf, uint64_t pos, size_t n)
{
	while (n) {
		size_t at = (size_t)(pos % AIM_PIPE_SIZE), run = AIM_PIPE_SIZE - at;
		run = run < n ? run : n;
		uint8_t *d = buf + at;
		uint8_t seq = (uint8_t)pos;
		for (size_t i = 0; i < run; i++)
			d[i] = (uint8_t)(seq + i);
		pos += run;
		n -= run;
	}
}

/* The number of bytes in the stretch that break the pattern. */
static size_t ring_check(const uint8_t *buf, uint64_t pos, size_t n)
{
	size_t bad = 0;
	while (n) {
		size_t at = (size_t)(pos % AIM_PIPE_SIZE), run = AIM_PIPE_SIZE - at;
		run = run < n ? run : n;
		const uint8_t *s = buf + at;
		uint8_t seq = (uint8_t)pos;
		for (size_t i = 0; i < run; i++)
			bad += s[i] != (uint8_t)(seq + i);
		pos += run;
		n -= run;
	}
	return bad;
}

size_t aim_pipe_write(struct aim_ctx *c, struct aim_pipe *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
		bool wake = false;
		uint32_t seen = 0;
		aim_lock(c, &p->mutex);
		uint64_t used = p->head - p->tail;
		size_t room = used > AIM_PIPE_SIZE ? 0 : AIM_PIPE_SIZE - (size_t)used;
		if (used > AIM_PIPE_SIZE)
			p->errors++;
		size_t chunk = n - done < room ? n - done : room;
		ring_fill(p->buf, p->head, chunk);
		p->wseq = (uint8_t)(p->wseq + chunk);
		p->head += chunk;
		done += chunk;
		if (chunk && p->reader_waits) {
			p->reader_waits = false;
			/* Relaxed: the futex word is only a wake-up ticket; the
			 * data is published by the pipe mutex. */
			atomic_fetch_add_explicit(&p->rd_event, 1, memory_order_relaxed);
			wake = true;
		}
		if (done < n) {
			p->writer_waits = true;
			seen = atomic_load_explicit(&p->wr_event, memory_order_relaxed);
		}
		aim_unlock(c, &p->mutex);
		if (wake)
			pipe_wake(&p->rd_event);
		if (done < n) {
			if (aim_stopping(c->k))
				break;
			pipe_sleep(c, &p->wr_event, seen);
		}
	}
	return done;
}

size_t aim_pipe_read(struct aim_ctx *c, struct aim_pipe *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
		bool wake = false;
		uint32_t seen = 0;
		aim_lock(c, &p->mutex);
		uint64_t avail = p->head - p->tail;
		if (avail > AIM_PIPE_SIZE) {
			p->errors++;
			avail = 0;
		}
		size_t chunk = n - done < avail ? n - done : (size_t)avail;
		p->errors += ring_check(p->buf, p->tail, chunk);
		p->rseq = (uint8_t)(p->rseq + chunk);
		p->tail += chunk;
		done += chunk;
		if (chunk && p->writer_waits) {
			p->writer_waits = false;
			/* Relaxed: a wake-up ticket, as in aim_pipe_write. */
			atomic_fetch_add_explicit(&p->wr_event, 1, memory_order_relaxed);
			wake = true;
		}
		if (done < n) {
			p->reader_waits = true;
			seen = atomic_load_explicit(&p->rd_event, memory_order_relaxed);
		}
		aim_unlock(c, &p->mutex);
		if (wake)
			pipe_wake(&p->wr_event);
		if (done < n) {
			if (aim_stopping(c->k))
				break;
			pipe_sleep(c, &p->rd_event, seen);
		}
	}
	return done;
}

/* ---------------------------------------------------------------- shm */

void aim_shm_write(struct aim_ctx *c, const uint8_t *src, uint32_t size)
{
	struct aim_shm *s = &c->k->shm;
	if (size > sizeof(s->buf))
		size = sizeof(s->buf);
	aim_lock(c, &s->sem);
	memcpy(s->buf, src, size);
	s->size = size;
	s->fill = src[0];
	aim_unlock(c, &s->sem);
}

/* The reader copies out what the last writer left and checks it is one
 * writer's data: every byte the writer's fill byte. */
void aim_shm_read(struct aim_ctx *c, uint8_t *dst)
{
	struct aim_shm *s = &c->k->shm;
	aim_lock(c, &s->sem);
	uint32_t size = s->size > sizeof(s->buf) ? (uint32_t)sizeof(s->buf) : s->size;
	memcpy(dst, s->buf, size);
	uint8_t fill = s->fill;
	aim_unlock(c, &s->sem);
	for (uint32_t i = 0; i < size; i++)
		if (dst[i] != fill) {
			/* Counted under the semaphore like everything else. */
			aim_lock(c, &s->sem);
			s->errors++;
			aim_unlock(c, &s->sem);
			break;
		}
}

/* -------------------------------------------------------------- ports */

uint32_t aim_port_bind(struct aim_ctx *c, uint32_t tag)
{
	struct aim_ports *pt = &c->k->ports;
	uint32_t port = AIM_NONE;
	aim_lock(c, &pt->lock);
	for (uint32_t i = 0, p = (tag * 7919u) % AIM_PORTS; i < AIM_PORTS;
	     i++, p = (p + 1) % AIM_PORTS)
		if (pt->owner[p] == 0) {
			pt->owner[p] = tag;
			pt->bound++;
			port = p;
			break;
		}
	aim_unlock(c, &pt->lock);
	return port;
}

void aim_port_release(struct aim_ctx *c, uint32_t port, uint32_t tag)
{
	struct aim_ports *pt = &c->k->ports;
	if (port == AIM_NONE)
		return;
	aim_lock(c, &pt->lock);
	if (port >= AIM_PORTS || pt->owner[port] != tag || pt->bound == 0) {
		pt->errors++;
	} else {
		pt->owner[port] = 0;
		pt->bound--;
	}
	aim_unlock(c, &pt->lock);
}
