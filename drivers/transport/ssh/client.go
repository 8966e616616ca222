package sshtransport

import (
	"golang.org/x/crypto/ssh"

	"github.com/fabctl/fabctl/spec"
)

// ClientAuth is a login for SSH transports other than the CLI session
// (the host driver's agent transport): the x/crypto client configuration
// with the credentials' auth methods and host keys verified against
// known_hosts (KnownHostsFile) unless insecure, the resolved secrets (for
// redaction only) and the auth methods offered (for the auth-failure
// message). One implementation of credentials and known_hosts for every
// SSH user in fabctl. Close it once the handshake is over: it may hold
// the ssh-agent connection.
type ClientAuth struct {
	Config     *ssh.ClientConfig
	Secrets    []string
	Tried      []string
	KnownHosts string // the file verifying the host key ("" when insecure)
	a          *clientAuth
}

// NewClientAuth builds the login for credentials c on addr ("host:port").
// Errors carry no secret; a known_hosts problem is an *Error of
// KindHostKey, anything else is a bad-settings error.
func NewClientAuth(c *spec.Credentials, addr string, insecure bool, o Options) (*ClientAuth, error) {
	kh := ""
	if !insecure {
		var err error
		if kh, err = KnownHostsFile(c, o.KnownHosts); err != nil {
			return nil, &Error{Kind: KindHostKey, Detail: err.Error()}
		}
	}
	a, err := authConfig(c, addr, kh, insecure, o)
	if err != nil {
		return nil, err
	}
	return &ClientAuth{Config: a.cfg, Secrets: a.secrets, Tried: a.tried, KnownHosts: kh, a: a}, nil
}

// Close releases what the login holds for the handshake.
func (x *ClientAuth) Close() { x.a.close() }
