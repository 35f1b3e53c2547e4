// SPDX-License-Identifier: GPL-2.0
/*
 * whatif_work.c - ntprof-top's what-if fit off the UI thread, at the
 * lowest priority (whatif_work.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "whatif_work.h"
#include "../thread.h"

/* nice 19 on this thread alone (Linux: a thread's nice is its own): a
 * small share of a CPU the workload wants, yet a share. SCHED_IDLE would
 * leave the view "computing" for as long as anything else runs. */
static void lowest_priority(void)
{
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
}

static void destroy(struct ntp_wi_work *w)
{
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
}

static void *worker(void *arg)
{
	struct ntp_wi_work *w = arg;
	int orphan;

	lowest_priority();
	pthread_mutex_lock(&w->mu);
	for (;;) {
		uint64_t gen;
		uint32_t qd;
		int refit, fitted = 0, pred_ok;
		struct ntp_wi_pred p;

		while (!w->stop && w->done_gen == w->req_gen)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stop)
			break;
		gen = w->req_gen;
		qd = w->req_qd;
		refit = w->req_refit;
		w->req_refit = 0;
		if (refit)
			w->in = w->req;
		/* tests: a pass that takes long (stop, wait_ms) */
		while (w->hold)
			pthread_cond_wait(&w->cv, &w->mu);
		pthread_mutex_unlock(&w->mu);

		if (refit) {
			ntp_wi_build_input(&w->in, &w->m);
			fitted = 1;
		}
		pred_ok = w->m.ok && !ntp_wi_predict(&w->m, qd, &p);

		pthread_mutex_lock(&w->mu);
		w->res.valid = 1;
		if (fitted) {
			w->res.index = w->in.index;
			w->res.base = w->in.base;
			w->res.m = w->m;
			w->fits++;
		}
		w->res.qd = qd;
		w->res.pred_ok = pred_ok;
		if (pred_ok) {
			w->res.p = p;
			w->predictions++;
		} else {
			memset(&w->res.p, 0, sizeof(w->res.p));
		}
		w->done_gen = gen;
		pthread_cond_broadcast(&w->cv);
	}
	/* stopped during a pass: the UI did not wait, the struct is ours */
	orphan = w->orphan;
	pthread_mutex_unlock(&w->mu);
	if (orphan)
		destroy(w);
	return NULL;
}

struct ntp_wi_work *ntp_wi_work_start(void)
{
	struct ntp_wi_work *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	/* the process's signals go to the UI thread, whose key wait they end
	 * (quit, resize); a fault stays with the thread that made it */
	err = ntp_thread_start(&w->thread, worker, w, NULL);
	if (err) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		free(w);
		return NULL;
	}
	w->started = 1;
	return w;
}

/* A pass (a fit of the MVA up to NTP_WI_MAX_QD at nice 19) can take long
 * on a busy machine, and nothing in it looks at stop: a worker in one is
 * left to finish it detached and free the struct itself (the process
 * usually exits first), so quitting does not wait for it. */
void ntp_wi_work_stop(struct ntp_wi_work *w)
{
	int busy;

	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	busy = w->started && w->done_gen != w->req_gen;
	w->orphan = busy;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (busy) {
		pthread_detach(w->thread);
		return;
	}
	if (w->started)
		pthread_join(w->thread, NULL);
	destroy(w);
}

int ntp_wi_work_want(struct ntp_wi_work *w, const struct ntp_wi_input *in, uint32_t qd)
{
	/* the UI's copy of the last input asked for: compared without the
	 * lock (the worker never touches it) */
	int refit = !w->have_last || !ntp_wi_input_same(&w->last, in);

	if (!refit && qd == w->last_qd)
		return 0;
	if (refit) {
		w->last = *in;
		w->last.p.shown = NULL;
		w->have_last = 1;
	}
	w->last_qd = qd;
	pthread_mutex_lock(&w->mu);
	if (refit) {
		w->req = w->last;
		w->req_refit = 1;
	}
	w->req_qd = qd;
	w->req_gen++;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	return 1;
}

uint64_t ntp_wi_work_get(struct ntp_wi_work *w, struct ntp_wi_shown *out)
{
	uint64_t gen;

	pthread_mutex_lock(&w->mu);
	*out = w->res;
	out->pending = w->done_gen != w->req_gen;
	out->want_qd = w->req_qd;
	gen = w->done_gen;
	pthread_mutex_unlock(&w->mu);
	return gen;
}

void ntp_wi_work_counts(struct ntp_wi_work *w, unsigned long *fits, unsigned long *predictions)
{
	pthread_mutex_lock(&w->mu);
	*fits = w->fits;
	*predictions = w->predictions;
	pthread_mutex_unlock(&w->mu);
}

void ntp_wi_work_wait(struct ntp_wi_work *w)
{
	pthread_mutex_lock(&w->mu);
	while (w->done_gen != w->req_gen)
		pthread_cond_wait(&w->cv, &w->mu);
	pthread_mutex_unlock(&w->mu);
}

int ntp_wi_work_wait_ms(struct ntp_wi_work *w, unsigned ms)
{
	struct timespec until;
	int done, err = 0;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&w->mu);
	while (w->done_gen != w->req_gen && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&w->cv, &w->mu, &until);
	done = w->done_gen == w->req_gen;
	pthread_mutex_unlock(&w->mu);
	return done;
}

const struct ntp_wi_input *ntp_wi_work_fitted(const struct ntp_wi_work *w)
{
	/* the UI's copy of the last input asked to be fitted: once the
	 * worker is done, the one its result was fitted on (it takes the
	 * newest request) */
	return w->have_last ? &w->last : NULL;
}
