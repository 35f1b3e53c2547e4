// SPDX-License-Identifier: GPL-2.0
/* bpf-runtime.c - BPF programs' run time by name prefix (bpf-runtime.h). */
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "bpf-runtime.h"

static long sys_bpf(int cmd, union bpf_attr *a)
{
	return syscall(__NR_bpf, cmd, a, sizeof(*a));
}

static int prog_info(int fd, struct bpf_prog_info *info)
{
	union bpf_attr a;

	memset(info, 0, sizeof(*info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(*info);
	a.info.info = (uint64_t)(uintptr_t)info;
	return (int)sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
}

int bpf_runtime_open(struct bpf_runtime *p, const char *prefix)
{
	union bpf_attr a;
	uint32_t id = 0;

	p->n = 0;
	for (;;) {
		struct bpf_prog_info info;
		int fd;

		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a)) {
			if (errno != ENOENT)	/* ENOENT: past the last */
				return -1;
			break;
		}
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		fd = (int)sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue;	/* unloaded meanwhile */
		if (prog_info(fd, &info) || strncmp(info.name, prefix, strlen(prefix)) ||
		    p->n == BPF_RUNTIME_MAX_PROGS) {
			close(fd);
			continue;
		}
		p->fd[p->n] = fd;
		p->id[p->n] = id;
		p->n++;
	}
	if (!p->n) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

uint64_t bpf_runtime_read(struct bpf_runtime *p)
{
	uint64_t sum = 0;

	for (int i = 0; i < p->n; i++) {
		struct bpf_prog_info info;

		if (!prog_info(p->fd[i], &info))
			p->ns[i] = info.run_time_ns;
		sum += p->ns[i];
	}
	return sum;
}

void bpf_runtime_mark(struct bpf_runtime *p)
{
	memcpy(p->at_mark, p->ns, sizeof(p->ns));
}
