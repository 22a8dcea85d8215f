// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * inject_probe.c: the library test_inject loads into its children.  Its
 * constructor appends "loaded <pid>" to /tmp/gt-inject-<pid>.log.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void inject_probe_init(void)
{
	char path[64], line[64];
	int fd, n;

	snprintf(path, sizeof(path), "/tmp/gt-inject-%d.log", (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		n = snprintf(line, sizeof(line), "loaded %d\n", (int)getpid());
		if (write(fd, line, (size_t)n) != n)
			n = -1;
		close(fd);
	}
	/* Clobbered on purpose: the injector must give the program its errno back. */
	errno = EBADMSG;
}
