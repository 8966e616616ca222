package sshtransport

import (
	"context"
	"io"
	"net"
	"time"

	"github.com/scrapli/scrapligo/transport"
	"golang.org/x/crypto/ssh"
)

// sshTransport is a scrapligo transport over x/crypto/ssh, used instead
// of scrapligo v1.4's "standard" transport because that one cannot
// offer ssh-agent keys, ignores a private key's passphrase, re-parses
// known_hosts for every connection and cannot restrict the host key
// algorithms to the known ones; and because its Read allocates a fresh
// read-size buffer (8 KiB) per read, which a plan of 64 switches pays in
// GC. Everything above the byte stream (prompts, privilege levels,
// failed-when-contains) stays scrapligo's.
type sshTransport struct {
	ctx  context.Context
	addr string
	cfg  *ssh.ClientConfig

	client  *ssh.Client
	session *ssh.Session
	w       io.WriteCloser
	r       io.Reader
	buf     []byte
}

var _ transport.Implementation = (*sshTransport)(nil)

// Open connects, authenticates, and starts a shell on a pty, as the
// standard transport does (xterm, echo on).
func (t *sshTransport) Open(a *transport.Args) error {
	d := net.Dialer{Timeout: a.TimeoutSocket}
	conn, err := d.DialContext(t.ctx, "tcp", t.addr)
	if err != nil {
		return err
	}
	// The whole handshake, not only the TCP connect, is bounded.
	_ = conn.SetDeadline(time.Now().Add(a.TimeoutSocket))
	cc, chans, reqs, err := ssh.NewClientConn(conn, t.addr, t.cfg)
	if err != nil {
		conn.Close()
		return err
	}
	_ = conn.SetDeadline(time.Time{})
	t.client = ssh.NewClient(cc, chans, reqs)
	if t.session, err = t.client.NewSession(); err != nil {
		t.Close()
		return err
	}
	if t.w, err = t.session.StdinPipe(); err != nil {
		t.Close()
		return err
	}
	if t.r, err = t.session.StdoutPipe(); err != nil {
		t.Close()
		return err
	}
	modes := ssh.TerminalModes{ssh.ECHO: 1, ssh.TTY_OP_ISPEED: 115200, ssh.TTY_OP_OSPEED: 115200}
	if err = t.session.RequestPty("xterm", a.TermHeight, a.TermWidth, modes); err != nil {
		t.Close()
		return err
	}
	if err = t.session.Shell(); err != nil {
		t.Close()
		return err
	}
	return nil
}

// Close ends the session and the connection.
func (t *sshTransport) Close() error {
	var err error
	if t.session != nil {
		err = t.session.Close()
		t.session = nil
	}
	if t.client != nil {
		if cerr := t.client.Close(); err == nil {
			err = cerr
		}
		t.client = nil
	}
	return err
}

// IsAlive reports whether the session is open.
func (t *sshTransport) IsAlive() bool { return t.session != nil }

// Read returns what the device sent, at most n bytes, in a slice of its
// own (scrapligo queues it): one reused buffer, one exact-size copy.
func (t *sshTransport) Read(n int) ([]byte, error) {
	if cap(t.buf) < n {
		t.buf = make([]byte, n)
	}
	k, err := t.r.Read(t.buf[:n])
	if k == 0 && err != nil {
		return nil, err
	}
	out := make([]byte, k)
	copy(out, t.buf[:k])
	return out, nil
}

// Write sends b to the device.
func (t *sshTransport) Write(b []byte) error {
	_, err := t.w.Write(b)
	return err
}
