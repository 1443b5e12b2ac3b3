#!/usr/bin/env bash
# TUI acceptance 4: --help and man/gputop.1 list the same options. Both lists are extracted
# mechanically: from --help, the option lines of its "Options:" block; from the man page as
# man renders it, the tagged lines of its OPTIONS section. Also: the man page renders without
# a single warning (groff -ww, man -l), and every TUI key of the function bar is in its KEYS.
source "$(dirname "$0")/../lib.sh"
need_gputop
MAN=$ROOT/man/gputop.1
[ -f "$MAN" ] || bail "man/gputop.1 exists"
command -v groff >/dev/null || skip "groff is not installed"

# Options named at the start of an option line: "-p, --pid PID  text" -> "-p" and "--pid".
option_names() {
	sed -nE 's/^ *(-[^ ].*)$/\1/p' |
		sed -E 's/(  |\t).*$//' |
		grep -oE '(^|[ ,])--?[A-Za-z][-A-Za-z]*' | sed -E 's/^[ ,]//' | sort -u
}

help_text=$("$GPUTOP" --help)
expect_eq "$?" 0 "gputop --help exits 0"
awk '/^Options:/ { on = 1; next } on && /^[^ ]/ { on = 0 } on' <<<"$help_text" |
	option_names >"$TMP/help.opts"

# The OPTIONS section, rendered (no hyphenation or adjustment so that names stay whole).
MANWIDTH=200 man -l "$MAN" 2>"$TMP/man.err" | col -b >"$TMP/man.txt"
awk '/^OPTIONS/ { on = 1; next } on && /^[A-Z]/ { on = 0 } on' "$TMP/man.txt" |
	option_names >"$TMP/man.opts"

note "--help: $(tr '\n' ' ' <"$TMP/help.opts")"
note "man:    $(tr '\n' ' ' <"$TMP/man.opts")"
[ "$(wc -l <"$TMP/help.opts")" -ge 10 ] && ok "--help lists options ($(wc -l <"$TMP/help.opts"))" ||
	not_ok "--help lists options (the extraction found $(wc -l <"$TMP/help.opts"))"
expect_file_eq "$TMP/man.opts" "$TMP/help.opts" "the man page's OPTIONS name the same short and long options as --help"

# Each option's argument too: "--delay SECONDS" in both.
with_args() {
	sed -nE 's/^ *(-[^ ].*)$/\1/p' | sed -E 's/(  |\t).*$//; s/^-[A-Za-z], //; s/ +$//' | sort -u
}
awk '/^Options:/ { on = 1; next } on && /^[^ ]/ { on = 0 } on' <<<"$help_text" | with_args >"$TMP/help.args"
awk '/^OPTIONS/ { on = 1; next } on && /^[A-Z]/ { on = 0 } on' "$TMP/man.txt" | with_args >"$TMP/man.args"
expect_file_eq "$TMP/man.args" "$TMP/help.args" "the same arguments (e.g. --delay SECONDS) in both"

# Clean rendering.
expect_eq "$(cat "$TMP/man.err")" "" "man -l renders it without a message on stderr"
groff -man -Tutf8 -ww -z "$MAN" 2>"$TMP/groff.err"
expect_eq "$?:$(cat "$TMP/groff.err")" "0:" "groff -man -ww: no warning"
for section in NAME SYNOPSIS DESCRIPTION OPTIONS KEYS VIEWS "EXIT STATUS" ENVIRONMENT PERMISSIONS \
	"WHAT GPUTOP WRITES INTO THE PROGRAM" EXAMPLES "SEE ALSO"; do
	grep -qx "$section" "$TMP/man.txt" && ok "section $section" || not_ok "section $section"
done

# Issue 26, part 6: the series of the other kernels is written as its label reads, and the
# LIMITATIONS no longer say that forked children are not traced (they are, by default).
man_joined=$(tr '\t\n' '  ' <"$TMP/man.txt" | tr -s ' ' | sed 's/\xe2\x80\x90 //g')
grep -qF 'kernel="(other kernels)"' <<<"$man_joined" && ok 'the man page writes kernel="(other kernels)"' ||
	not_ok 'the man page writes kernel="(other kernels)"'
grep -qiE 'forked children are not traced' <<<"$man_joined" && not_ok "the man page does not say forked children are not traced" ||
	ok "the man page does not say forked children are not traced"

# Every exit status of enum exit_code (src/base/exit_codes.h) is in EXIT STATUS (it was read
# from src/cli.h, which no longer has them: the loop checked nothing).
codes=$(sed -nE 's/^\s*EXIT_[A-Z_]+ = ([0-9]+),.*/\1/p' "$ROOT/src/base/exit_codes.h")
[ "$(wc -w <<<"$codes")" -ge 10 ] && ok "the exit statuses read from exit_codes.h ($(wc -w <<<"$codes"))" ||
	not_ok "the exit statuses read from exit_codes.h (found: $codes)"
exit_sec=$(awk '/^EXIT STATUS/ { on = 1; next } on && /^[A-Z]/ { on = 0 } on' "$TMP/man.txt")
for code in $codes; do
	grep -qE "^ +$code +[A-Z]" <<<"$exit_sec" && ok "exit status $code documented" || not_ok "exit status $code documented"
done
# Issue 36, part 7: -b -n ends a session without CUDA with 7, as --timeout does (errors.sh runs it).
# man_entry TAG: the entry of a tagged paragraph ("       7      The program ..." and the lines
# that go on it) of the section on stdin, on one line.
man_entry() {
	awk -v tag="$1" 'on && /^ {7}[^ \t]/ { on = 0 }
		substr($0, 1, 7 + length(tag) + 1) == sprintf("%7s%s ", "", tag) { on = 1 } on' | tr -s ' \t\n' '   '
}
expect_match "$(man_entry 7 <<<"$exit_sec")" '-b -n' "exit status 7: -b -n named"

# The DESCRIPTION and WHAT GPUTOP WRITES say what gputop plants today: jumps to stubs, int3 only
# where no jump fits (issue 36, part 7: they described a breakpoint at every call).
desc=$(awk '/^DESCRIPTION/ { on = 1; next } on && /^[A-Z]/ { on = 0 } on' "$TMP/man.txt" | tr -s ' \n' '  ')
expect_match "$desc" 'puts a jump at each to a small stub' "DESCRIPTION: a jump to a stub at each entry point"
expect_match "$desc" 'in steady state no call stops the program' "DESCRIPTION: no stop in steady state"
expect_match "$desc" 'Where no jump fits.* int3 breakpoint instead' "DESCRIPTION: int3 only where no jump fits"
writes=$(awk '/^WHAT GPUTOP WRITES INTO THE PROGRAM/ { on = 1; next } on && /^[A-Z]/ { on = 0 } on' "$TMP/man.txt" |
	tr -s ' \n' '  ')
first_item=$(sed -E 's/^[^•]*• ([^•]*)•.*/\1/' <<<"$writes")
expect_match "$first_item" '^a 5-byte jmp at the entry of each probed function' "WHAT GPUTOP WRITES: the jump comes first"
expect_match "$writes" '• an int3 breakpoint byte at the entry of a probed function where no jump fits' \
	"WHAT GPUTOP WRITES: an int3 only where no jump fits"

# Every key word of the TUI's table (ui/keys.c) is in KEYS.
keys_sec=$(awk '/^KEYS/ { on = 1; next } on && /^[A-Z]/ { on = 0 } on' "$TMP/man.txt")

# Enter (issue 36, part 7): the views whose rows open call stacks (.details in ui/view_*.c) are
# each named by the help's Enter line (ui/keys.c, what ? shows) and by KEYS' Enter entry.
detail_views=$(awk '/^const struct tui_view [a-z_]+ = \{/ { on = 1; name = ""; det = 0 }
	on && match($0, /\.name = "[^"]+"/) { name = substr($0, RSTART + 9, RLENGTH - 10) }
	on && /\.details = / { det = 1 }
	on && /^\};/ { if (det) print name; on = 0 }' "$ROOT"/ui/view_*.c | sort -u)
[ "$(wc -w <<<"$detail_views")" -ge 3 ] && ok "views with call stacks: $(tr '\n' ' ' <<<"$detail_views")" ||
	not_ok "views with call stacks, read from ui/view_*.c (found: $detail_views)"
enter_help=$(grep -A1 '"Enter"' "$ROOT/ui/keys.c" | tr -s ' \t\n' '   ')
enter_man=$(man_entry Enter <<<"$keys_sec")
[ -n "$enter_man" ] || not_ok "KEYS has an entry for Enter"
for v in $detail_views; do
	grep -qw "$v" <<<"$enter_help" && ok "the help's Enter line names $v" || not_ok "the help's Enter line names $v ($enter_help)"
	grep -qw "$v" <<<"$enter_man" && ok "KEYS' Enter names $v" || not_ok "KEYS' Enter names $v"
done
for k in $(sed -nE 's/^\s*\{ \{[^}]*\}, "([^"]+)".*/\1/p' "$ROOT/ui/keys.c" |
	sed -E ':a; s#([^ ])/([^ ])#\1 \2#; ta' | tr ' ' '\n' | sort -u); do
	case $k in
	S-Tab) word=Shift-Tab ;;
	*) word=$k ;;
	esac
	grep -qE "(^|[ ,])$(sed 's/[?]/[?]/' <<<"$word")(,| |$)" <<<"$keys_sec" && ok "key $k in KEYS" ||
		not_ok "key $k in KEYS"
done
finish
