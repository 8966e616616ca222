package opensm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// runner runs shell command lines on the subnet manager's host: over SSH,
// or on this machine when the spec says connect = "local".
type runner interface {
	run(ctx context.Context, cmd string, stdin []byte) (stdout, stderr []byte, code int, err error)
	sudoRefused(stderr string) bool
	close()
}

type sshRunner struct{ x *sshtransport.ExecConn }

func (r sshRunner) run(ctx context.Context, cmd string, stdin []byte) ([]byte, []byte, int, error) {
	return r.x.Run(ctx, cmd, stdin)
}
func (r sshRunner) sudoRefused(stderr string) bool { return r.x.SudoRefused(stderr) }
func (r sshRunner) close()                         { r.x.Close() }

type localRunner struct{}

func (localRunner) run(ctx context.Context, cmd string, stdin []byte) ([]byte, []byte, int, error) {
	c := exec.CommandContext(ctx, "/bin/sh", "-c", cmd)
	var so, se bytes.Buffer
	c.Stdout, c.Stderr = &so, &se
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	err := c.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		return so.Bytes(), se.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return so.Bytes(), se.Bytes(), -1, err
	}
	return so.Bytes(), se.Bytes(), 0, nil
}

func (localRunner) sudoRefused(stderr string) bool {
	return strings.Contains(stderr, "sudo:") && (strings.Contains(stderr, "password is required") ||
		strings.Contains(stderr, "not in the sudoers") || strings.Contains(stderr, "not allowed") || strings.Contains(stderr, "not found"))
}
func (localRunner) close() {}

// dial opens the runner for a subnet manager.
func (d *Driver) dial(ctx context.Context, t drivers.Target, sm *intent.SubnetManager) (runner, error) {
	switch sm.Driver {
	case "local":
		return localRunner{}, nil
	case "ssh", "":
		x, err := sshtransport.DialExec(ctx, t, d.Opts.SSH)
		if err != nil {
			return nil, err
		}
		return sshRunner{x}, nil
	}
	return nil, &sshtransport.Error{Device: sm.Name, Op: "connect", Kind: sshtransport.KindConfig,
		Detail: fmt.Sprintf("host %s has connect = %q; the opensm driver works over ssh, or locally (connect = \"local\") on the subnet manager itself", sm.Name, sm.Driver)}
}

// shq quotes a word for sh.
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// script is the command line running a POSIX sh script with arguments,
// under sudo -n (never prompting) when the host says sudo = true.
func script(sudo bool, body string, args ...string) string {
	var b strings.Builder
	if sudo {
		b.WriteString("sudo -n -- ")
	}
	b.WriteString("/bin/sh -c " + shq(body) + " fabctl")
	for _, a := range args {
		b.WriteString(" " + shq(a))
	}
	return b.String()
}

// remoteFile is one file as read from the subnet manager.
type remoteFile struct {
	Path    string
	Data    string
	Present bool
}

// exitAbsent is the read script's exit code for a missing file.
const exitAbsent = 3

const readScript = `if [ -e "$1" ]; then exec cat -- "$1"; fi; exit 3`

// writeScript replaces $1 with stdin atomically: the data goes to
// $1.fabctl.tmp in the same directory (same file system), is synced, takes
// the old file's mode, and is renamed over $1 (rename(2) is atomic: a
// reader sees the old or the new file, never a mix). With $2 = backup the
// old file is first copied to $1.fabctl.bak (one backup, no timestamp:
// the previous state). Any failure before the rename leaves $1 untouched
// and removes the temp file.
const writeScript = `set -e
f=$1
t=$f.fabctl.tmp
trap 'rm -f -- "$t" 2>/dev/null' EXIT
mkdir -p -- "$(dirname -- "$f")"
cat > "$t"
if [ -e "$f" ]; then
	chmod --reference="$f" -- "$t" 2>/dev/null || true
	if [ "$2" = backup ]; then cp -p -- "$f" "$f.fabctl.bak"; fi
fi
sync -- "$t" 2>/dev/null || true
mv -f -- "$t" "$f"`

const removeScript = `rm -f -- "$1"`

// pidScript prints the pids of the running opensm: the pid file's ($1)
// when it names a live process, else every opensm process that reads the
// opensm.conf fabctl writes ($2; Debian runs one opensm per port,
// opensm@<guid>.service, without a pid file, all reading the same files).
// An opensm started on another configuration (another subnet's, a test
// bed's) is not signalled: its file is the argument of -F/--config
// (opensm(8): "-F, --config <file name>"; getopt_long's "--config=F" and
// "-FF" forms too), relative to its working directory, or without one the
// default ($3, the driver's DefaultConfFile).
const pidScript = `if [ -n "$1" ] && [ -r "$1" ]; then
	read -r p < "$1" || true
	if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then echo "$p"; exit 0; fi
fi
want=$(readlink -f -- "$2" 2>/dev/null || printf '%s' "$2")
for p in $(pidof opensm); do
	args=$(tr '\000' '\n' < "/proc/$p/cmdline" 2>/dev/null) || continue
	conf=$3 next=
	while IFS= read -r a; do
		if [ -n "$next" ]; then conf=$a next=; continue; fi
		case $a in
		-F|--config) next=1 ;;
		--config=*) conf=${a#--config=} ;;
		-F?*) conf=${a#-F} ;;
		esac
	done <<ARGS
$args
ARGS
	case $conf in /*) ;; *) conf=$(readlink "/proc/$p/cwd")/$conf ;; esac
	if [ "$(readlink -f -- "$conf" 2>/dev/null || printf '%s' "$conf")" = "$want" ]; then echo "$p"; fi
done
exit 0`

// session is one connection's worth of file and signal operations.
type session struct {
	r    runner
	name string // device name, for errors
	sudo bool
	sm   *intent.SubnetManager
}

func (s *session) fail(op string, stderr []byte, code int) error {
	detail := lastLine(stderr)
	if s.sudo && s.r.sudoRefused(string(stderr)) {
		detail = "sudo -n refused (" + detail + "): allow the login to run /bin/sh as root without a password on the subnet manager, or log in as root and set sudo = false"
	} else if code >= 0 {
		detail = fmt.Sprintf("exit %d: %s", code, detail)
	}
	return &sshtransport.Error{Device: s.name, Op: op, Kind: sshtransport.KindCommand, Detail: detail}
}

func (s *session) runErr(op string, err error) error {
	return &sshtransport.Error{Device: s.name, Op: op, Kind: sshtransport.KindClosed, Detail: err.Error()}
}

func (s *session) read(ctx context.Context, path string) (remoteFile, error) {
	out, errb, code, err := s.r.run(ctx, script(s.sudo, readScript, path), nil)
	switch {
	case err != nil:
		return remoteFile{}, s.runErr("read "+path, err)
	case code == exitAbsent:
		return remoteFile{Path: path}, nil
	case code != 0:
		return remoteFile{}, s.fail("read "+path, errb, code)
	}
	return remoteFile{Path: path, Data: string(out), Present: true}, nil
}

func (s *session) write(ctx context.Context, path, data string, backup bool) error {
	mode := "nobackup"
	if backup {
		mode = "backup"
	}
	_, errb, code, err := s.r.run(ctx, script(s.sudo, writeScript, path, mode), []byte(data))
	switch {
	case err != nil:
		return s.runErr("write "+path, err)
	case code != 0:
		return s.fail("write "+path, errb, code)
	}
	return nil
}

func (s *session) remove(ctx context.Context, path string) error {
	_, errb, code, err := s.r.run(ctx, script(s.sudo, removeScript, path), nil)
	switch {
	case err != nil:
		return s.runErr("remove "+path, err)
	case code != 0:
		return s.fail("remove "+path, errb, code)
	}
	return nil
}

// restore puts a file back as it was: its old content, or no file.
func (s *session) restore(ctx context.Context, f remoteFile) error {
	if !f.Present {
		return s.remove(ctx, f.Path)
	}
	return s.write(ctx, f.Path, f.Data, false)
}

func (s *session) pids(ctx context.Context, pidFile, confFile string) ([]int, error) {
	out, errb, code, err := s.r.run(ctx, script(s.sudo, pidScript, pidFile, confFile, DefaultConfFile), nil)
	switch {
	case err != nil:
		return nil, s.runErr("find opensm", err)
	case code != 0:
		return nil, s.fail("find opensm", errb, code)
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if n, err := strconv.Atoi(f); err == nil && n > 1 {
			pids = append(pids, n)
		}
	}
	return pids, nil
}

// hup makes opensm reread its files: SIGHUP forces a heavy sweep
// (opensm/main.c: osm_hup_flag -> force_heavy_sweep), and a heavy sweep
// rescans opensm.conf's runtime options (the qos_* ones are
// "can update") and parses partitions.conf and the QoS policy again
// (opensm/osm_state_mgr.c do_sweep -> osm_subn_rescan_conf_files).
func (s *session) hup(ctx context.Context, pids []int) error {
	args := make([]string, len(pids))
	for i, p := range pids {
		args[i] = strconv.Itoa(p)
	}
	op := "kill -HUP " + strings.Join(args, " ")
	_, errb, code, err := s.r.run(ctx, script(s.sudo, `kill -HUP "$@"`, args...), nil)
	switch {
	case err != nil:
		return s.runErr(op, err)
	case code != 0:
		return s.fail(op, errb, code)
	}
	return nil
}

func lastLine(b []byte) string {
	t := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(t, '\n'); i >= 0 {
		t = t[i+1:]
	}
	if len(t) > 300 {
		t = t[:300] + "..."
	}
	if t == "" {
		t = "no error output"
	}
	return t
}
