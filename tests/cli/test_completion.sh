#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The bash completion (dist/bash-completion/ktest): sourced in bash, _ktest
# called with COMP_WORDS/COMP_CWORD as bash sets them, COMPREPLY checked.
. "$(dirname "$0")/../lib.sh"

cd "$KTEST_TMP" || exit 1
comp=$KTEST_SRC/dist/bash-completion/ktest
if ! command -v bash >/dev/null; then
	not_ok "bash is installed (sh .ci/deps.sh)"
	finish
fi

mkdir -p cfgs/sub || exit 1
: >cfgs/a.conf; : >cfgs/b.ktest; : >cfgs/notes.txt; : >cfgs/box.log

# complete WORD... [-- ...]: the words (the last one is being completed),
# from cfgs/; COMPREPLY one per line, sorted, in reply
complete_words() {
	(cd cfgs && bash -c '. "$1"; shift
		COMP_WORDS=()
		while (($#)) && [[ $1 != -- ]]; do COMP_WORDS+=("$1"); shift; done
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=(); _ktest
		printf "%s\n" "${COMPREPLY[@]}"' sh "$comp" "$KTEST" "$@") \
		2>comp.err | sed '/^$/d' | sort >reply
}

# expect "what" WORD... -- REPLY...: the completion of WORD... is REPLY...
expect() {
	what=$1; shift
	complete_words "$@"
	while [ "$1" != -- ]; do shift; done
	shift
	printf '%s\n' "$@" | sed '/^$/d' | sort >want
	if cmp -s want reply && [ ! -s comp.err ]; then ok "$what"; else
		not_ok "$what"
		diff want reply | sed 's/^/# /' | head -n 10
		sed 's/^/# err: /' comp.err | head -n 5
	fi
}

"$KTEST" --help | awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 }
	on { print $1 }' >commands
check "ktest --help lists commands" test -s commands
cmds=$(cat commands)

# shellcheck disable=SC2086
expect "the first word: every command of --help, configs and directories" \
	"" -- $cmds a.conf b.ktest sub
expect "a command's prefix" ch -- check
expect "after a command: configs only" check "" -- a.conf b.ktest sub
expect "after the config: nothing" check a.conf "" --
expect "ktest options takes nothing" options "" --
expect "ktest monitor takes any file (a console log)" monitor bo -- box.log
expect "configs after options" -D X=1 --dry-run "" -- $cmds a.conf b.ktest sub
expect "a config's prefix" a -- a.conf
expect "long options from --help" --d -- --dry-run
expect "--format= with its =" --fo -- --format=
expect "--format's values, split at = as bash splits" --format = "" -- \
	legacy native
expect "--format's values, with a prefix" --format = n -- native
expect "--format's values, unsplit" --format=l -- --format=legacy
expect "--json takes any file" --json no -- notes.txt
expect "--json's file is not the config" --json x.json check "" -- \
	a.conf b.ktest sub
expect "-D: option names from ktest options, with =" -D BUILD_T -- \
	BUILD_TYPE= BUILD_TARGET=
expect "-D: lower-case (native) names complete too" -D build_ty -- \
	BUILD_TYPE=
expect "-DNAME attached" -DBUILD_TY -- -DBUILD_TYPE=
expect "-D: no completion of the value" -D BUILD_TYPE=o --

"$KTEST" options | awk '{ print $1 "=" }' | sort >all-options
complete_words -D ""
check "-D with nothing typed offers every option of ktest options" \
	cmp -s all-options reply

bash -c ". '$comp'; complete -p ktest" >reg 2>&1
check "the file registers _ktest for ktest" grep -qx 'complete -F _ktest ktest' reg

# the way bash-completion loads it: by the command's name, on demand
bc=/usr/share/bash-completion/bash_completion
if [ -f "$bc" ]; then
	mkdir -p xdg/bash-completion/completions
	cp "$comp" xdg/bash-completion/completions/ktest
	XDG_DATA_DIRS=$KTEST_TMP/xdg bash -c ". '$bc'
		_completion_loader ktest; complete -p ktest" >reg 2>&1
	check "bash-completion loads it for ktest from .../completions/ktest" \
		grep -qx 'complete -F _ktest ktest' reg
fi

finish
