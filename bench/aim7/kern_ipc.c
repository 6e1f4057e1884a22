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
 * The byte pattern: byte k of the stream is (uint8_t)k.  A ring run (at
 * most the whole ring) starting at stream position pos is the stretch of
 * `pattern` starting at pos mod 256, so it is written with one memcpy and
 * checked with one memcmp: the cost of a copy.  The real pipe's own copies
 * and wake-ups are in the cost table's pipe_rt and burnt by aim_kwork; the
 * model's transfer must cost less than the table's, or it, not the table,
 * sets the sizing scale (doc/aim7.md, "Sizing").  Only a run that differs
 * is counted byte by byte.
 */
#define PATTERN_PERIOD 256
#define B4(n) (uint8_t)(n), (uint8_t)((n) + 1), (uint8_t)((n) + 2), (uint8_t)((n) + 3)
#define B16(n) B4(n), B4((n) + 4), B4((n) + 8), B4((n) + 12)
#define B64(n) B16(n), B16((n) + 16), B16((n) + 32), B16((n) + 48)
#define B256 B64(0), B64(64), B64(128), B64(192)
#define B1K B256, B256, B256, B256
#define B8K B1K, B1K, B1K, B1K, B1K, B1K, B1K, B1K
_Static_assert(AIM_PIPE_SIZE == 8192, "pattern[] holds one ring and a period");
static const uint8_t pattern[AIM_PIPE_SIZE + PATTERN_PERIOD] = { B8K, B256 };

/* Where the pattern of the stream's byte `pos` onwards starts. */
static const uint8_t *pattern_at(uint64_t pos)
{
	return pattern + (size_t)(pos % PATTERN_PERIOD);
}

static void ring_fill(uint8_t *buf, uint64_t pos, size_t n)
{
	while (n) {
		size_t at = (size_t)(pos % AIM_PIPE_SIZE), run = AIM_PIPE_SIZE - at;
		run = run < n ? run : n;
		memcpy(buf + at, pattern_at(pos), run);
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
		const uint8_t *got = buf + at, *want = pattern_at(pos);
		if (memcmp(got, want, run))
			for (size_t i = 0; i < run; i++)
				bad += got[i] != want[i];
		pos += run;
		n -= run;
	}
	return bad;
}

/*
 * The end of one pass of a pipe read or write, under p->mutex: wake the
 * other end if it waits and this pass moved bytes (chunk), mark this end
 * waiting if it has more to move, drop the mutex, then wake and sleep
 * outside it.  false when the run is stopping instead of sleeping.
 */
static bool pipe_pass_end(struct aim_ctx *c, struct aim_pipe *p, size_t chunk, bool more,
			  bool *peer_waits, _Atomic uint32_t *peer_event, bool *self_waits,
			  _Atomic uint32_t *self_event)
{
	bool wake = false;
	uint32_t seen = 0;
	if (chunk && *peer_waits) {
		*peer_waits = false;
		/* Relaxed: the futex word is only a wake-up ticket; the
		 * data is published by the pipe mutex. */
		atomic_fetch_add_explicit(peer_event, 1, memory_order_relaxed);
		wake = true;
	}
	if (more) {
		*self_waits = true;
		seen = atomic_load_explicit(self_event, memory_order_relaxed);
	}
	aim_unlock(c, &p->mutex);
	if (wake)
		pipe_wake(peer_event);
	if (more) {
		if (aim_stopping(c->k))
			return false;
		pipe_sleep(c, self_event, seen);
	}
	return true;
}

size_t aim_pipe_write(struct aim_ctx *c, struct aim_pipe *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
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
		if (!pipe_pass_end(c, p, chunk, done < n, &p->reader_waits, &p->rd_event,
				   &p->writer_waits, &p->wr_event))
			break;
	}
	return done;
}

size_t aim_pipe_read(struct aim_ctx *c, struct aim_pipe *p, size_t n)
{
	size_t done = 0;
	while (done < n) {
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
		if (!pipe_pass_end(c, p, chunk, done < n, &p->writer_waits, &p->wr_event,
				   &p->reader_waits, &p->rd_event))
			break;
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
	/* Every byte is the fill byte iff the first is and each equals the
	 * next: one memcmp of the copy against itself shifted by a byte. */
	if (size && (dst[0] != fill || memcmp(dst, dst + 1, size - 1))) {
		/* Counted under the semaphore like everything else. */
		aim_lock(c, &s->sem);
		s->errors++;
		aim_unlock(c, &s->sem);
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
