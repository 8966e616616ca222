package ibfabric

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Batching. smpquery reads one attribute of one port per process
// (infiniband-diags smpquery(8): "smpquery [options] <op> <dest> [op
// params]"), and the tools have no mode that reads many ports' P_Key,
// SL2VL or VL arbitration tables in one process by SMP (saquery reads
// the subnet manager's cached records instead, not the ports). What a
// batch saves is the round trips around each process: a Runner that is
// also a BatchRunner runs a whole list of smpquery calls as one command
// on the SM host (one SSH session instead of one per call), which starts
// them there with a bound on how many run at once.

// BatchRunner is a Runner that can run many calls of one program in one
// go. Results are in the order of argsList.
type BatchRunner interface {
	Runner
	RunBatch(ctx context.Context, name string, argsList [][]string, parallel int) ([]BatchResult, error)
}

// BatchResult is one call's outcome: its standard output, and an error
// carrying its exit status and standard error when it failed.
type BatchResult struct {
	Out []byte
	Err error
}

// ShellExec runs a command line with stdin on a host and returns its
// standard output and error and exit status (err: the command could not
// be run at all).
type ShellExec func(ctx context.Context, cmdline string, stdin []byte) (stdout, stderr []byte, code int, err error)

// batchScript runs "$1" (the program) once per line of standard input,
// the line being "<index> <args...>", at most "$2" at a time (xargs -P),
// each call's stdout, stderr and exit status into a temporary directory;
// then prints, per index 0..$3-1, a header "#fabctl-batch <index> <exit>
// <stdout bytes> <stderr bytes>" followed by the two outputs. Arguments
// are words without shell metacharacters (checked by the caller), so
// xargs' word splitting keeps them whole.
const batchScript = `set -u
prog=$1 par=$2 n=$3
d=$(mktemp -d) || exit 125
trap 'rm -rf -- "$d"' EXIT
xargs -r -P "$par" -L 1 /bin/sh -c 'd=$1 p=$2 i=$3; shift 3; "$p" "$@" >"$d/$i.out" 2>"$d/$i.err"; echo $? >"$d/$i.rc"' fabctl "$d" "$prog"
i=0
while [ "$i" -lt "$n" ]; do
	rc=255
	[ -r "$d/$i.rc" ] && read -r rc <"$d/$i.rc"
	touch "$d/$i.out" "$d/$i.err"
	printf '#fabctl-batch %s %s %s %s\n' "$i" "$rc" "$(wc -c <"$d/$i.out")" "$(wc -c <"$d/$i.err")"
	cat "$d/$i.out" "$d/$i.err"
	i=$((i+1))
done`

// safeWord reports whether an argument can travel through the batch
// script's xargs unquoted.
func safeWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._,:/+-", r)) {
			return false
		}
	}
	return true
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ShellBatch runs the calls through one shell command line (prefix, e.g.
// "sudo -n --", goes before it): the batch script above.
func ShellBatch(ctx context.Context, exec ShellExec, prefix, prog string, argsList [][]string, parallel int) ([]BatchResult, error) {
	if parallel <= 0 {
		parallel = DefaultParallel
	}
	var in bytes.Buffer
	for i, args := range argsList {
		in.WriteString(strconv.Itoa(i))
		for _, a := range args {
			if !safeWord(a) {
				return nil, fmt.Errorf("%s: argument %q cannot be batched", prog, a)
			}
			in.WriteString(" " + a)
		}
		in.WriteString("\n")
	}
	cmd := strings.TrimSpace(prefix + " /bin/sh -c " + shQuote(batchScript) + " fabctl " + shQuote(prog) + " " + strconv.Itoa(parallel) + " " + strconv.Itoa(len(argsList)))
	out, errb, code, err := exec(ctx, cmd, in.Bytes())
	if err != nil {
		return nil, err
	}
	if code != 0 {
		return nil, fmt.Errorf("%s batch: exit %d: %s", prog, code, strings.TrimSpace(string(errb)))
	}
	return parseBatch(prog, argsList, out)
}

// parseBatch splits the batch script's output into results.
func parseBatch(prog string, argsList [][]string, out []byte) ([]BatchResult, error) {
	res := make([]BatchResult, len(argsList))
	for i := range argsList {
		nl := bytes.IndexByte(out, '\n')
		if nl < 0 {
			return nil, fmt.Errorf("%s batch: output ends before call %d", prog, i)
		}
		f := strings.Fields(string(out[:nl]))
		if len(f) != 5 || f[0] != "#fabctl-batch" || f[1] != strconv.Itoa(i) {
			return nil, fmt.Errorf("%s batch: bad header %q for call %d", prog, clip(string(out[:nl])), i)
		}
		rc, e1 := strconv.Atoi(f[2])
		no, e2 := strconv.Atoi(f[3])
		ne, e3 := strconv.Atoi(f[4])
		if e1 != nil || e2 != nil || e3 != nil || no < 0 || ne < 0 || nl+1+no+ne > len(out) {
			return nil, fmt.Errorf("%s batch: bad header %q for call %d", prog, clip(string(out[:nl])), i)
		}
		body := out[nl+1:]
		res[i].Out = body[:no]
		if rc != 0 {
			msg := strings.TrimSpace(string(body[no : no+ne]))
			if j := strings.LastIndexByte(msg, '\n'); j >= 0 {
				msg = msg[j+1:]
			}
			res[i].Err = fmt.Errorf("%s %s: exit %d: %s", prog, strings.Join(argsList[i], " "), rc, msg)
		}
		out = body[no+ne:]
	}
	return res, nil
}
