// SPDX-License-Identifier: GPL-2.0
/* test_thread.c - a helper thread leaves the process's signals to the caller's thread (core/thread.h). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "core/thread.h"

static void *own_mask(void *arg)
{
	pthread_sigmask(SIG_BLOCK, NULL, arg);
	return NULL;
}

static sigset_t mask_of_thread(const int *keep)
{
	sigset_t m;
	pthread_t th;

	sigemptyset(&m);
	assert_int_equal(ntp_thread_start(&th, own_mask, &m, keep), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	return m;
}

/* quit, terminate and resize go to the caller; faults stay where they are
 * made; keep leaves its signals open; the caller's own mask is as before */
static void test_signals_left_to_caller(void **state)
{
	sigset_t before, after, m;

	(void)state;
	pthread_sigmask(SIG_BLOCK, NULL, &before);
	m = mask_of_thread(NULL);
	assert_true(sigismember(&m, SIGINT));
	assert_true(sigismember(&m, SIGTERM));
	assert_true(sigismember(&m, SIGWINCH));
	assert_true(sigismember(&m, SIGPIPE));
	assert_false(sigismember(&m, SIGSEGV));
	assert_false(sigismember(&m, SIGBUS));
	assert_false(sigismember(&m, SIGFPE));
	assert_false(sigismember(&m, SIGILL));
	m = mask_of_thread((const int[]){ SIGPIPE, SIGXFSZ, 0 });
	assert_false(sigismember(&m, SIGPIPE));
	assert_false(sigismember(&m, SIGXFSZ));
	assert_true(sigismember(&m, SIGINT));
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	assert_int_equal(sigismember(&before, SIGINT), sigismember(&after, SIGINT));
	assert_int_equal(sigismember(&before, SIGWINCH), sigismember(&after, SIGWINCH));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals_left_to_caller),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
