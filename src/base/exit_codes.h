/* exit_codes.h — gputop's exit statuses (man/gputop.1, EXIT STATUS), for every layer that
 * decides one: the command line, the session, the attach or launch, the seccomp checks. Only
 * numbers: nothing here knows why. In launch mode gputop exits with the program's status,
 * unless an output could not be written at the end (EXIT_OUTPUT: the results are missing). */
#ifndef GPUTOP_EXIT_CODES_H
#define GPUTOP_EXIT_CODES_H

enum exit_code {
	EXIT_OK = 0,
	EXIT_FAILURE_ = 1,	/* an error while tracing */
	EXIT_USAGE = 2,		/* bad command line */
	EXIT_NO_PROCESS = 3,	/* no such process, or not a process that can be traced */
	EXIT_PERMISSION = 4,	/* not permitted to trace it */
	EXIT_NO_PROGRAM = 5,	/* the program to launch does not exist or is not executable */
	EXIT_OUTPUT = 6,	/* an output (--json, --trace, --folded, --timeline, -o,
				 * --json-interval) cannot be written, at the start or at the end,
				 * or --listen cannot listen */
	EXIT_NO_CUDA = 7,	/* the program never loaded CUDA before -n/--timeout ran out */
	EXIT_BUSY = 8,		/* another tracer (gdb, strace, ...) already traces it */
	EXIT_SECCOMP = 9,	/* a seccomp filter forbids, or gputop cannot show that it allows,
				 * the system calls gputop makes the program run */
};

#endif
