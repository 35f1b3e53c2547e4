// SPDX-License-Identifier: GPL-2.0
/* hostq.c - nr_requests and the hardware queues of a namespace in sysfs. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include "hostq.h"

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Hardware queues: the directories under queue's mq/ (one per hctx). */
static uint32_t count_mq(const char *blk)
{
	char path[320];
	struct dirent *e;
	uint32_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/sys/block/%s/mq", blk);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9')
			n++;
	closedir(d);
	return n;
}

int top_host_queues(const char *dev, uint32_t *tags, uint32_t *hw_queues)
{
	char path[320], blk[272];
	struct dirent *e;
	unsigned ctrl, ns;
	long v;
	DIR *d;

	*tags = *hw_queues = 0;
	snprintf(blk, sizeof(blk), "%s", dev);
	/* A multipath head (nvme0n1) is bio-based: its tags are those of its
	 * paths (nvme0c0n1, hidden), which blk-mq allocates. */
	if (sscanf(dev, "nvme%un%u", &ctrl, &ns) == 2 && (d = opendir("/sys/block"))) {
		char want[64];

		snprintf(want, sizeof(want), "n%u", ns);
		while ((e = readdir(d))) {
			unsigned c2, p, n2;
			char prefix[32];

			snprintf(prefix, sizeof(prefix), "nvme%uc", ctrl);
			if (!strncmp(e->d_name, prefix, strlen(prefix)) &&
			    sscanf(e->d_name, "nvme%uc%un%u", &c2, &p, &n2) == 3 && n2 == ns) {
				snprintf(blk, sizeof(blk), "%s", e->d_name);
				break;
			}
		}
		closedir(d);
	}
	snprintf(path, sizeof(path), "/sys/block/%s/queue/nr_requests", blk);
	v = read_long(path);
	if (v <= 0)
		return -1;
	*tags = (uint32_t)v;
	*hw_queues = count_mq(blk);
	return 0;
}
