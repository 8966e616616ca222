package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/pkg/sftp"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host/agentproto"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// The SSH transport (connect = "ssh" or "ssh+netns:NAME"): the host is
// planned and applied by `fabctl agent` running on it, the same binary
// as the controller. Per operation the controller connects
// (golang.org/x/crypto/ssh, host key verified against known_hosts unless
// --insecure), runs `<agent> agent --version-check`, copies its own
// binary over SFTP when the build differs or is missing (like Ansible
// ships its modules; temp file + rename, mode 755), then runs the agent
// (with `sudo -n` when the host says sudo = true) with the request on
// stdin and parses the JSON response. docs/agent.md has the details.
// The connection (credentials, known_hosts, errors, the pool) is
// drivers/transport/ssh's; this file is the agent's side of it.

// SSHOptions tune the SSH transport. Zero values take the defaults.
type SSHOptions struct {
	// ConnectTimeout bounds TCP connect + SSH handshake (default 10s).
	ConnectTimeout time.Duration
	// CommandTimeout bounds one agent run, copy included (default 5m).
	CommandTimeout time.Duration
	// KnownHosts is the known_hosts file when the credentials name none
	// ("" = ~/.ssh/known_hosts).
	KnownHosts string
	// Binary is the fabctl executable shipped to hosts (default
	// $FABCTL_AGENT_BINARY, else this executable): it must run there.
	Binary string
	// RemoteDir is where hosts keep the agent, as fabctl-<build> (default
	// $FABCTL_AGENT_DIR, else ~/.cache/fabctl; "~/" is the login's home).
	RemoteDir string
	// SaveDir is where the agent saves each applied desired state for
	// `fabctl agent --reapply` at boot (default $FABCTL_AGENT_SAVE_DIR,
	// else /var/lib/fabctl/agent; "none": do not save).
	SaveDir string
	// Getenv resolves env() secrets and the FABCTL_AGENT_* defaults
	// (nil: os.Getenv).
	Getenv func(string) string
	pool   *connPool // nil: the process's pool (sharedPool)
}

// Defaults of SSHOptions.
const (
	DefaultAgentDir       = "~/.cache/fabctl"
	DefaultSaveDir        = "/var/lib/fabctl/agent"
	defaultConnectTimeout = 10 * time.Second
	defaultCommandTimeout = 5 * time.Minute
)

// Error kinds of the agent transport beyond sshtransport's.
const (
	KindSudo  sshtransport.Kind = "sudo refused"
	KindAgent sshtransport.Kind = "agent failed"
	KindCopy  sshtransport.Kind = "agent copy failed"
)

func (o SSHOptions) withDefaults() SSHOptions {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = defaultConnectTimeout
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = defaultCommandTimeout
	}
	if o.Binary == "" {
		o.Binary = o.Getenv("FABCTL_AGENT_BINARY")
	}
	if o.RemoteDir == "" {
		o.RemoteDir = o.Getenv("FABCTL_AGENT_DIR")
	}
	if o.RemoteDir == "" {
		o.RemoteDir = DefaultAgentDir
	}
	if o.SaveDir == "" {
		o.SaveDir = o.Getenv("FABCTL_AGENT_SAVE_DIR")
	}
	if o.SaveDir == "" {
		o.SaveDir = DefaultSaveDir
	}
	if o.SaveDir == "none" {
		o.SaveDir = ""
	}
	if o.pool == nil {
		o.pool = sharedPool
	}
	return o
}

// localAgent is the identity and architecture of the binary to ship.
type localAgent struct {
	path, build, machine string
}

var localAgents sync.Map // binary path -> *localAgent (or error)

func shippedAgent(binary string) (*localAgent, error) {
	if binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("locating this fabctl binary to ship: %w", err)
		}
		binary = exe
	}
	if v, ok := localAgents.Load(binary); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*localAgent), nil
	}
	la := &localAgent{path: binary}
	id, err := agentproto.Identity(binary)
	if err == nil {
		la.build = id
		la.machine, err = agentproto.Machine(binary)
	}
	if err != nil {
		err = fmt.Errorf("the fabctl binary to ship (%s): %w", binary, err)
		localAgents.Store(binary, err)
		return nil, err
	}
	localAgents.Store(binary, la)
	return la, nil
}

// viaAgent runs one request on the host's agent over SSH. Errors name the
// host and the step and carry no secret.
func (d *Driver) viaAgent(ctx context.Context, t drivers.Target, h *intent.Host, req agentproto.Request) (*agentproto.Response, error) {
	return d.agentCall(ctx, t, h, req, nil, 0)
}

// agentCall is viaAgent with onLine receiving the agent's stderr lines as
// they come. limit bounds the call (0: connect + command timeouts).
func (d *Driver) agentCall(ctx context.Context, t drivers.Target, h *intent.Host, req agentproto.Request, onLine func(string), limit time.Duration) (*agentproto.Response, error) {
	o := d.SSH.withDefaults()
	la, err := shippedAgent(o.Binary)
	if err != nil {
		return nil, &sshtransport.Error{Device: h.Name, Op: "agent", Kind: sshtransport.KindConfig, Detail: err.Error()}
	}
	if limit <= 0 {
		limit = o.ConnectTimeout + o.CommandTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	remote := path.Join(o.RemoteDir, "fabctl-"+la.build)
	key := poolKey(t, remote)
	c, _ := o.pool.Get(key)
	if c != nil {
		// A pooled connection may have died while idle: check it with the
		// cheapest request there is, and dial afresh if it did.
		if !c.Alive() {
			c.Close()
			c = nil
		}
	}
	if c == nil {
		var err error
		if c, err = dialSSH(ctx, t, o); err != nil {
			return nil, err
		}
	}
	req.Protocol, req.Host, req.Netns = agentproto.Protocol, h, h.Connect.Netns
	resp, err := c.agentRequest(ctx, la, remote, o, h.Sudo, &req, onLine)
	var se *sshtransport.Error
	if err == nil || errors.As(err, &se) && se.Kind != sshtransport.KindClosed && se.Kind != sshtransport.KindTimeout {
		o.pool.Put(key, c) // the connection is fine; the agent's answer was an error
	} else {
		c.Close()
	}
	return resp, err
}

// agentRequest runs the request on the agent, putting the agent in place
// when it is not. The request carries this controller's build, so the
// agent is run straight away, without a separate version check (one
// process start per request, not two): an agent that is missing (the
// shell or sudo cannot find it), of another build (it refuses with
// KindBuild), or older than the build field (it refuses the unknown
// field) did nothing, and is then checked, copied when needed, and the
// request run once more. A connection remembers the agent it checked, so
// an agent refused after that check vanished or changed in between.
func (c *sshConn) agentRequest(ctx context.Context, la *localAgent, remote string, o SSHOptions, sudo bool, req *agentproto.Request, onLine func(string)) (*agentproto.Response, error) {
	req.Build = la.build
	for attempt := 0; ; attempt++ {
		resp, err := c.runAgent(ctx, remote, sudo, la.build, req, onLine)
		var se *sshtransport.Error
		notStarted := errors.Is(err, errAgentMissing) || errors.Is(err, errAgentBuild) || errors.As(err, &se) && se.Kind == KindSudo
		var na *notAgentError
		if errors.As(err, &na) {
			// Not an agent's answer: on a connection that has not checked
			// the agent yet, whatever is at its path is checked (and
			// replaced) like a missing one; after that check, an error.
			notStarted, err = c.verified != remote, na.err
		}
		if notStarted && attempt == 0 {
			if err := c.ensureAgent(ctx, la, remote, o); err != nil {
				return nil, err
			}
			c.verified = remote
			continue
		}
		switch {
		case errors.Is(err, errAgentMissing):
			return nil, c.Fail("agent "+string(req.Op), KindAgent, "the agent "+remote+" vanished right after it was checked")
		case errors.Is(err, errAgentBuild):
			return nil, c.Fail("agent "+string(req.Op), KindAgent, "the agent "+remote+" is another build than this controller right after it was checked and copied")
		}
		return resp, err
	}
}

// poolKey identifies a host's login: the same host, address, user,
// credentials and host-key policy share a connection. The host name is
// part of it: several hosts behind one address (ssh+netns testbeds) each
// keep their own connection, and errors name the right host.
func poolKey(t drivers.Target, remote string) string {
	user, creds := "", ""
	if c := t.Credentials; c != nil {
		user, creds = c.Username, c.Name+"@"+c.Src.Block.Filename
	}
	return fmt.Sprintf("%s|%s@%s|%s|%v|%s", t.Device.Name, user, t.Device.Address, creds, t.Insecure, remote)
}

// connPool keeps a host's connection, and the agent checked on it,
// between the steps of a run (sshtransport.Pool).
type connPool = sshtransport.Pool[*sshConn]

var sharedPool = newConnPool()

func newConnPool() *connPool { return sshtransport.NewPool[*sshConn]() }

// sshConn is one SSH connection to a host and the agent checked on it.
type sshConn struct {
	*sshtransport.ExecConn
	verified string // the agent path checked on this connection
}

// dialSSH connects and authenticates to the target's address.
func dialSSH(ctx context.Context, t drivers.Target, o SSHOptions) (*sshConn, error) {
	x, err := sshtransport.DialExec(ctx, t, sshtransport.ExecOptions{ConnectTimeout: o.ConnectTimeout, KnownHosts: o.KnownHosts, Getenv: o.Getenv})
	if err != nil {
		return nil, err
	}
	return &sshConn{ExecConn: x}, nil
}

// shellPath quotes a remote path for sh, expanding a leading "~/" to the
// login's home.
func shellPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return `"$HOME"/` + shq(rest)
	}
	return shq(p)
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// causeLine picks the line of an agent's stderr that says why it gave no
// result: fabctl's own "internal error:" / "Error:" line, else the last.
func causeLine(b []byte) string {
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "internal error:") || strings.HasPrefix(l, "Error:") {
			return lastLine([]byte(l))
		}
	}
	return lastLine(b)
}

// probe runs the remote agent's handshake; ok is false when it is
// missing or does not run.
func (c *sshConn) probe(ctx context.Context, remote string) (hs agentproto.Handshake, why string, err error) {
	out, errb, code, err := c.Run(ctx, shellPath(remote)+" agent --version-check", nil)
	if err != nil {
		return hs, "", c.Fail("agent version check", sshtransport.KindClosed, err.Error())
	}
	switch {
	case code == 127:
		return hs, "not installed", nil
	case code != 0:
		return hs, fmt.Sprintf("does not run (exit %d: %s)", code, lastLine(errb)), nil
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &hs); err != nil || hs.Agent != "fabctl" {
		return hs, "answered the version check with something that is not a fabctl handshake (an older fabctl?)", nil
	}
	return hs, "", nil
}

// ensureAgent makes sure remote is this build's agent, copying it when
// it is missing or another build.
func (c *sshConn) ensureAgent(ctx context.Context, la *localAgent, remote string, o SSHOptions) error {
	hs, why, err := c.probe(ctx, remote)
	if err != nil {
		return err
	}
	if why == "" && hs.Matches(la.build) {
		return nil
	}
	if why == "" {
		why = fmt.Sprintf("build %s (protocol %d), this controller is build %s (protocol %d)", hs.Build, hs.Protocol, la.build, agentproto.Protocol)
	}
	out, _, code, err := c.Run(ctx, "uname -sm", nil)
	if err != nil {
		return c.Fail("uname", sshtransport.KindClosed, err.Error())
	}
	if u := strings.Fields(string(out)); code == 0 && len(u) == 2 && (u[0] != "Linux" || u[1] != la.machine) {
		return c.Fail("copy agent", KindCopy, fmt.Sprintf("the host is %s %s and this fabctl binary is Linux %s: point FABCTL_AGENT_BINARY at a fabctl built for it", u[0], u[1], la.machine))
	}
	drivers.Eventf(ctx, "%s: agent %s: %s; copying %s over SFTP", c.Device(), remote, why, la.path)
	if err := c.copyAgent(la.path, remote, why != "not installed"); err != nil {
		return err
	}
	hs, why, err = c.probe(ctx, remote)
	if err != nil {
		return err
	}
	if why != "" || !hs.Matches(la.build) {
		if why == "" {
			why = "reports build " + hs.Build
		}
		return c.Fail("copy agent", KindCopy, fmt.Sprintf("the copied agent %s %s", remote, why))
	}
	return nil
}

// copyAgent ships the binary over SFTP: a temp file in the target
// directory, chmod 755, then an atomic rename, so a concurrent run (or a
// host sharing the home directory) never runs a half-written agent. A
// missing agent is put in place with SFTP's plain rename, which never
// replaces a file: when another run got there first with the same build
// (the name is the build), its file stays and ours is dropped, so a
// running agent's file (and the inode sudo's rule check resolves) never
// changes under it. A wrong file in the way (replace) is replaced
// atomically (posix-rename@openssh.com).
func (c *sshConn) copyAgent(local, remote string, replace bool) error {
	fail := func(err error) error { return c.Fail("copy agent", KindCopy, err.Error()) }
	sc, err := sftp.NewClient(c.SSHClient(), sftp.UseConcurrentWrites(true))
	if err != nil {
		return fail(fmt.Errorf("SFTP subsystem: %w (is sftp enabled in sshd_config?)", err))
	}
	defer sc.Close()
	if rest, ok := strings.CutPrefix(remote, "~/"); ok {
		home, err := sc.Getwd()
		if err != nil {
			return fail(err)
		}
		remote = path.Join(home, rest)
	}
	if err := sc.MkdirAll(path.Dir(remote)); err != nil {
		return fail(fmt.Errorf("mkdir %s: %w", path.Dir(remote), err))
	}
	src, err := os.Open(local)
	if err != nil {
		return fail(err)
	}
	defer src.Close()
	tmp := fmt.Sprintf("%s.tmp-%d-%d", remote, os.Getpid(), time.Now().UnixNano())
	dst, err := sc.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return fail(fmt.Errorf("create %s: %w", tmp, err))
	}
	_, err = dst.ReadFrom(src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sc.Chmod(tmp, 0o755)
	}
	if err == nil && replace {
		err = sc.PosixRename(tmp, remote)
	} else if err == nil {
		if err = sc.Rename(tmp, remote); err != nil {
			if _, serr := sc.Stat(remote); serr == nil {
				err = sc.Remove(tmp) // another run put the same build in place
			}
		}
	}
	if err != nil {
		_ = sc.Remove(tmp)
		return fail(fmt.Errorf("write %s: %w", remote, err))
	}
	return nil
}

// runAgent runs the agent with the request on stdin and parses its reply.
func (c *sshConn) runAgent(ctx context.Context, remote string, sudo bool, build string, req *agentproto.Request, onLine func(string)) (*agentproto.Response, error) {
	step := "agent " + string(req.Op)
	body, err := json.Marshal(req)
	if err != nil {
		return nil, c.Fail(step, sshtransport.KindConfig, err.Error())
	}
	cmd := shellPath(remote) + " agent"
	if sudo {
		// -n: never prompt; a password prompt would hang the run.
		cmd = "sudo -n -- " + cmd
	}
	out, errb, code, err := c.RunLines(ctx, cmd, body, onLine)
	if err != nil {
		if ctx.Err() != nil {
			return nil, c.Fail(step, sshtransport.KindTimeout, "cancelled or timed out waiting for the agent (an apply in progress finishes on the host)")
		}
		return nil, c.Fail(step, sshtransport.KindClosed, err.Error())
	}
	var resp agentproto.Response
	if jerr := json.Unmarshal(bytes.TrimSpace(out), &resp); jerr != nil || resp.Protocol == 0 {
		if len(out) == 0 && (code == 127 || code == 1 && strings.Contains(string(errb), "command not found")) {
			return nil, errAgentMissing // sh's 127, or sudo's "command not found"
		}
		if sudo {
			if k, d := sudoProblem(string(errb), c.User(), remote); k != "" {
				return nil, c.Fail(step, k, d)
			}
		}
		return nil, &notAgentError{c.Fail(step, KindAgent, fmt.Sprintf("exit %d without a result: %s", code, causeLine(errb)))}
	}
	if resp.Agent.Build != build || resp.Kind() == agentproto.KindBuild {
		return nil, errAgentBuild // whatever it said, it did nothing: it refused our build field
	}
	if resp.Protocol != agentproto.Protocol {
		return nil, c.Fail(step, KindAgent, fmt.Sprintf("the agent answered with protocol %d, this controller speaks %d", resp.Protocol, agentproto.Protocol))
	}
	if resp.Kind() == agentproto.KindStale {
		return nil, &drivers.StaleError{Device: "host." + c.Device(), Planned: req.Fingerprint, Live: resp.Fingerprint}
	}
	if resp.UnknownOp(req.Op) {
		// The agent predates the op (the binary shipped to hosts,
		// SSHOptions.Binary or FABCTL_AGENT_BINARY, is an older fabctl
		// than this controller): it did nothing.
		return nil, c.Fail(step, KindAgent, fmt.Sprintf("the agent on %s is too old to report %s: update it (ship a fabctl of this controller's version: FABCTL_AGENT_BINARY)", c.Device(), req.Op))
	}
	if !resp.OK {
		err := c.Fail(step, KindAgent, resp.Err().Error())
		if resp.Kind() == agentproto.KindPartial {
			return nil, &drivers.PartialError{Device: "host." + c.Device(), Err: err}
		}
		return nil, err
	}
	return &resp, nil
}

// errAgentMissing: the agent checked earlier on this connection is gone
// (the shell could not find it); nothing ran.
var errAgentMissing = errors.New("the agent is not installed")

// notAgentError: what runs at the agent's path gave no agent response.
type notAgentError struct{ err error }

func (e *notAgentError) Error() string { return e.err.Error() }
func (e *notAgentError) Unwrap() error { return e.err }

// errAgentBuild: the agent is another build than the controller and
// refused the request; nothing ran.
var errAgentBuild = errors.New("the agent is another build")

// sudoProblem recognises sudo's own refusals on stderr.
func sudoProblem(stderr, user, remote string) (sshtransport.Kind, string) {
	switch sshtransport.SudoRefusalOf(stderr) {
	case sshtransport.SudoNeedsPassword:
		return KindSudo, fmt.Sprintf("sudo needs a password for %s: fabctl runs sudo -n and never types one; allow the agent without a password (sudoers: %s ALL=(root) NOPASSWD: %s/fabctl-*, with ~ spelled out; see docs/agent.md#sudo) or log in as root with sudo = false",
			user, user, path.Dir(remote))
	case sshtransport.SudoNotAllowed:
		return KindSudo, fmt.Sprintf("%s may not run the agent with sudo: add a sudoers rule for it (docs/agent.md#sudo)", user)
	case sshtransport.SudoMissing:
		return KindSudo, "sudo is not installed on the host: install it or log in as root with sudo = false"
	}
	return "", ""
}
