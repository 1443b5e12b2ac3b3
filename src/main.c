/* main.c — gputop's entry point: parse the command line, run one session. */
#include <stdlib.h>

#include "cli.h"
#include "config.h"
#include "session.h"

int main(int argc, char **argv)
{
	struct options opt;
	config_load();
	int r = cli_parse(argc, argv, &opt);
	if (r > 0)
		return EXIT_OK;
	if (r < 0)
		return EXIT_USAGE;
	return session_run(&opt);
}
