/* launch_check.c — a program that cannot be run, said in its own words (launch_check.h). */
#include "launch_check.h"

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"

static bool executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Whether execvp would find name (no '/' in it) in PATH. */
static bool in_path(const char *name)
{
	const char *path = getenv("PATH");
	char file[PATH_MAX];

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");
		snprintf(file, sizeof file, "%.*s/%s", (int)len, len ? p : ".", name);
		if (executable_file(file))
			return true;
		p += len + (p[len] == ':');
	}
	return false;
}

int launch_check(const char *name)
{
	struct stat st;
	bool path = strchr(name, '/') != NULL;

	if ((!path && in_path(name)) || stat(name, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;	/* found, or nothing here to explain better than execvp's errno */
	if (access(name, X_OK) == 0) {
		if (path)
			return 0;
		log_error("cannot run '%s': not found in PATH", name);
		log_hint("to run the file '%s' in this folder, give its path: gputop -- ./%s", name, name);
		return EXIT_NO_PROGRAM;
	}
	log_error("cannot run '%s': not an executable", name);
	log_hint("it has no execute permission (chmod +x makes a program or a #! script runnable)");
	return EXIT_NO_PROGRAM;
}
