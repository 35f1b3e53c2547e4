// SPDX-License-Identifier: GPL-2.0
/*
 * ntp-tcpstream: a plain TCP stream over loopback, for what ntprof costs
 * traffic that is not NVMe-oF (bench/hook_cost.sh, docs/performance.md).
 * ntprof's socket-send hooks (tcp_sendmsg, tcp_sendpage) run for every send
 * of the machine; this stream is the "every other socket".
 *
 * A receiver (child process) accepts one connection on 127.0.0.1 and reads
 * until EOF; the sender writes blocks of -b bytes (one tcp_sendmsg each) for
 * -s seconds. Last line:
 *   ntp-tcpstream: bs=B sends=N secs=S mbps=X sends_per_s=X cpu_ns_per_send=X
 * cpu_ns_per_send: user + system CPU time of both processes per send.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_s(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int receiver(int lfd)
{
	char buf[65536];
	int fd = accept(lfd, NULL, NULL);

	if (fd < 0)
		return 1;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	double secs = 5, t0, t1, c0, cpu;
	long bs = 1024, sends = 0;
	int c, lfd, fd, status;
	char *buf;
	pid_t pid;

	while ((c = getopt(argc, argv, "s:b:")) != -1) {
		if (c == 's' && (secs = strtod(optarg, NULL)) > 0)
			continue;
		if (c == 'b' && (bs = strtol(optarg, NULL, 10)) >= 1 && bs <= (1 << 20))
			continue;
		fprintf(stderr, "usage: ntp-tcpstream [-s SECONDS] [-b BYTES per send, 1..1048576]\n");
		return 2;
	}
	buf = calloc(1, bs);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (!buf || lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
		fprintf(stderr, "ntp-tcpstream: listening socket on 127.0.0.1: %s\n", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ntp-tcpstream: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0)
		_exit(receiver(lfd));
	close(lfd);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "ntp-tcpstream: connect to 127.0.0.1:%u: %s\n", ntohs(sa.sin_port), strerror(errno));
		kill(pid, SIGTERM);
		return 1;
	}
	c0 = cpu_s(RUSAGE_SELF);
	t0 = now_s();
	do {
		/* check the clock every 64 sends: the loop is what is measured */
		for (int i = 0; i < 64; i++) {
			if (write(fd, buf, bs) != bs) {
				fprintf(stderr, "ntp-tcpstream: write: %s\n", strerror(errno));
				kill(pid, SIGTERM);
				return 1;
			}
			sends++;
		}
		t1 = now_s();
	} while (t1 - t0 < secs);
	close(fd);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "ntp-tcpstream: the receiver failed\n");
		return 1;
	}
	/* the receiver's CPU time includes its accept (negligible next to secs) */
	cpu = cpu_s(RUSAGE_SELF) - c0 + cpu_s(RUSAGE_CHILDREN);
	printf("ntp-tcpstream: bs=%ld sends=%ld secs=%.2f mbps=%.1f sends_per_s=%.0f cpu_ns_per_send=%.0f\n", bs, sends,
	       t1 - t0, sends * (double)bs / (t1 - t0) / 1e6, sends / (t1 - t0), cpu * 1e9 / sends);
	free(buf);
	return 0;
}
