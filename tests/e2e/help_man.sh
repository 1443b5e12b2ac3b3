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

# Every exit status of enum exit_code (src/cli.h) is in EXIT STATUS.
for code in $(sed -nE 's/^\s*EXIT_[A-Z_]+ = ([0-9]+),.*/\1/p' "$ROOT/src/cli.h"); do
	awk '/^EXIT STATUS/ { on = 1; next } on && /^[A-Z]/ { on = 0 } on' "$TMP/man.txt" |
		grep -qE "^ +$code +[A-Z]" && ok "exit status $code documented" || not_ok "exit status $code documented"
done

# Every key word of the TUI's table (ui/keys.c) is in KEYS.
keys_sec=$(awk '/^KEYS/ { on = 1; next } on && /^[A-Z]/ { on = 0 } on' "$TMP/man.txt")
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
