package host

import (
	"context"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/sshcli"
)

// ExecConn is the SSH transport's connection, exported for drivers that
// manage a Linux host by commands and files rather than through the agent
// (the opensm subnet-manager driver): the same authentication, known_hosts
// verification and secret-free error kinds as the host driver, not a
// second copy of them.
type ExecConn struct{ c *sshConn }

// DialExec connects to the target's address (t.Device.Address) with its
// credentials; errors are *sshcli.Error naming the device.
func DialExec(ctx context.Context, t drivers.Target, o SSHOptions) (*ExecConn, error) {
	c, err := dialSSH(ctx, t, t.Device.Name, o.withDefaults())
	if err != nil {
		return nil, err
	}
	return &ExecConn{c: c}, nil
}

// Run runs a shell command line with stdin (nil: none). A non-zero exit
// is not an error: code says it; stderr keeps its last 8 KiB.
func (x *ExecConn) Run(ctx context.Context, cmd string, stdin []byte) (stdout, stderr []byte, code int, err error) {
	return x.c.exec(ctx, cmd, stdin)
}

// Fail builds the connection's error for a step, secrets redacted.
func (x *ExecConn) Fail(op string, k sshcli.Kind, detail string) error {
	return x.c.fail(op, k, detail)
}

// SudoRefused reports whether a command's stderr is sudo refusing to run
// it (a password needed, no sudoers rule, no sudo at all).
func (x *ExecConn) SudoRefused(stderr string) bool {
	k, _ := sudoProblem(stderr, x.c.user, "")
	return k != ""
}

// User is the login name.
func (x *ExecConn) User() string { return x.c.user }

// Close ends the connection.
func (x *ExecConn) Close() { x.c.close() }
