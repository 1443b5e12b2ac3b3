/* fdlimit.c — gputop's limit of open files, raised for --listen and put back for the program
 * (fdlimit.h). */
#include "fdlimit.h"

#include <stdbool.h>
#include <sys/resource.h>

static struct {
	struct rlimit original;
	bool raised;
} fdlimit;

long fdlimit_raise(long want)
{
	struct rlimit now;
	if (getrlimit(RLIMIT_NOFILE, &now) < 0)
		return 1024;
	if (!fdlimit.raised)
		fdlimit.original = now;
	if (now.rlim_cur != RLIM_INFINITY && (rlim_t)want > now.rlim_cur) {
		struct rlimit more = now;
		more.rlim_cur = now.rlim_max == RLIM_INFINITY || (rlim_t)want < now.rlim_max ? (rlim_t)want : now.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &more) == 0) {
			now = more;
			fdlimit.raised = true;
		}
	}
	return now.rlim_cur == RLIM_INFINITY || now.rlim_cur > (rlim_t)want ? want : (long)now.rlim_cur;
}

void fdlimit_restore(void)
{
	if (fdlimit.raised)
		setrlimit(RLIMIT_NOFILE, &fdlimit.original);
}
