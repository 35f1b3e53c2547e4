/* SPDX-License-Identifier: GPL-2.0 */
/*
 * whatif_work.h - ntprof-top's what-if fit on a thread of its own, at the
 * lowest priority (nice 19 on its thread): a fit at QDs up to 1024 is
 * costly (docs/what-if.md), and on the machine under test it must neither
 * hold up the screen nor take CPU from the workload being measured.
 *
 * The UI asks (ntp_wi_work_want) for the what-if of an input at a QD; the
 * worker refits only when the input is not the same as the one it last
 * fitted (ntp_wi_input_same), predicts when the QD changed, and publishes
 * the result. The UI reads a copy of the last result (ntp_wi_work_get): a
 * prediction always with the QD and base interval it was made for, and
 * whether a newer one is being computed. One mutex guards the request and
 * the result; the fit runs outside it.
 */
#ifndef NTP_WHATIF_WORK_H
#define NTP_WHATIF_WORK_H

#include <pthread.h>
#include "whatif.h"

/* What the view shows: the last result. */
struct ntp_wi_shown {
	int valid;			/* 0: nothing computed yet */
	uint64_t index;			/* the base interval fitted on */
	struct ntp_snap_group base;	/* its group (the measured columns) */
	struct ntp_wi_model m;
	uint32_t qd;			/* the QD predicted at */
	int pred_ok;			/* p is a prediction (else m.why, or a bad QD) */
	struct ntp_wi_pred p;
	/* set by ntp_wi_work_get: a newer request is being computed, and its QD */
	int pending;
	uint32_t want_qd;
};

struct ntp_wi_work {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, stop;
	int orphan;			/* stopped in a pass: the worker frees the struct */
	int hold;			/* tests (under mu): the worker waits in its pass while set */
	/* the request (under mu): the input to fit when refit, the QD */
	struct ntp_wi_input req;
	int req_refit;
	uint32_t req_qd;
	uint64_t req_gen, done_gen;
	/* the result (under mu) */
	struct ntp_wi_shown res;
	unsigned long fits, predictions;	/* done so far */
	/* the worker's own */
	struct ntp_wi_input in;
	struct ntp_wi_model m;
	/* the UI's own: what it asked for last */
	struct ntp_wi_input last;
	int have_last;
	uint32_t last_qd;
};

/* Allocates and starts the worker; NULL when it cannot. */
struct ntp_wi_work *ntp_wi_work_start(void);
/* Stops and frees the worker; one in a pass is not waited for (it frees
 * itself when the pass ends). */
void ntp_wi_work_stop(struct ntp_wi_work *w);
/* UI: the what-if of in at qd. Returns 1 when that asks the worker for
 * something (a fit, or a prediction at another QD), 0 when the last
 * request already is this. */
int ntp_wi_work_want(struct ntp_wi_work *w, const struct ntp_wi_input *in, uint32_t qd);
/* UI: a copy of the last result, pending and want_qd set; returns the
 * count of results published so far (a change: redraw). */
uint64_t ntp_wi_work_get(struct ntp_wi_work *w, struct ntp_wi_shown *out);
/* The fits and predictions made so far. */
void ntp_wi_work_counts(struct ntp_wi_work *w, unsigned long *fits, unsigned long *predictions);
/* Waits until the last request is done (tests). */
void ntp_wi_work_wait(struct ntp_wi_work *w);
/* The same for at most ms milliseconds: 1 when done, 0 when not yet
 * (ntprof-top's S, which says it waits and lets q quit meanwhile). */
int ntp_wi_work_wait_ms(struct ntp_wi_work *w, unsigned ms);
/* UI, after ntp_wi_work_wait: the input the result was fitted on (the last
 * one that asked for a fit), NULL when none did. */
const struct ntp_wi_input *ntp_wi_work_fitted(const struct ntp_wi_work *w);

#endif
