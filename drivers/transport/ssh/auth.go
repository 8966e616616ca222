package sshtransport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skeema/knownhosts"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
)

// clientAuth is what a session needs to log in: the x/crypto client
// configuration, the resolved secret values (for redaction only) and the
// enable password, and what to close once the handshake is over (the
// ssh-agent connection).
type clientAuth struct {
	cfg     *ssh.ClientConfig
	secrets []string
	enable  string
	tried   []string // auth methods offered, for the auth-failure message
	closers []func()
}

func (a *clientAuth) close() {
	for _, f := range a.closers {
		f()
	}
	a.closers = nil
}

// authConfig builds the client configuration for credentials c on
// addr ("host:port"): private key (with its passphrase), the ssh-agent's
// keys when the credentials ask for them (ssh_agent = true), password
// (also answered to keyboard-interactive, which PAM-backed switches use),
// in that order as OpenSSH tries them; host keys checked against the
// known_hosts file kh unless insecure. Errors are bad-settings errors
// without any secret.
func authConfig(c *spec.Credentials, addr, kh string, insecure bool, o Options) (*clientAuth, error) {
	a := &clientAuth{cfg: &ssh.ClientConfig{User: c.Username, Timeout: o.ConnectTimeout}}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if c.PrivateKey != nil {
		key, err := c.PrivateKey.Resolve(getenv)
		if err != nil {
			return nil, err
		}
		a.secrets = append(a.secrets, spec.Masks(key)...)
		var signer ssh.Signer
		if c.Passphrase != nil {
			pass, err := c.Passphrase.Resolve(getenv)
			if err != nil {
				return nil, err
			}
			a.secrets = append(a.secrets, pass)
			if signer, err = ssh.ParsePrivateKeyWithPassphrase([]byte(key), []byte(pass)); err != nil {
				return nil, fmt.Errorf("private key %s: cannot decrypt or parse it with passphrase %s", c.PrivateKey, c.Passphrase)
			}
		} else if signer, err = ssh.ParsePrivateKey([]byte(key)); err != nil {
			var pm *ssh.PassphraseMissingError
			if errors.As(err, &pm) {
				return nil, fmt.Errorf("private key %s is encrypted: set passphrase in credentials %q", c.PrivateKey, c.Name)
			}
			return nil, fmt.Errorf("private key %s is not an SSH private key fabctl can parse", c.PrivateKey)
		}
		a.cfg.Auth = append(a.cfg.Auth, ssh.PublicKeys(signer))
		a.tried = append(a.tried, "private_key")
	}
	if c.SSHAgent {
		m, err := agentAuth(c, getenv, o.ConnectTimeout, a)
		if err != nil {
			a.close()
			return nil, err
		}
		a.cfg.Auth = append(a.cfg.Auth, m)
	}
	if c.Password != nil {
		pw, err := c.Password.Resolve(getenv)
		if err != nil {
			a.close()
			return nil, err
		}
		a.secrets = append(a.secrets, pw)
		a.cfg.Auth = append(a.cfg.Auth, ssh.Password(pw),
			ssh.KeyboardInteractive(func(_, _ string, qs []string, _ []bool) ([]string, error) {
				ans := make([]string, len(qs))
				for i := range qs {
					ans[i] = pw
				}
				return ans, nil
			}))
		a.tried = append(a.tried, "password")
	}
	if len(a.cfg.Auth) == 0 {
		return nil, fmt.Errorf("credentials %q have no password, private_key or ssh_agent = true", c.Name)
	}
	if c.EnablePassword != nil {
		en, err := c.EnablePassword.Resolve(getenv)
		if err != nil {
			a.close()
			return nil, err
		}
		a.secrets = append(a.secrets, en)
		a.enable = en
	}
	if insecure {
		a.cfg.HostKeyCallback = ssh.InsecureIgnoreHostKey() // #nosec G106 -- explicit --insecure
		return a, nil
	}
	db, err := hostKeyDB(kh)
	if err != nil {
		a.close()
		return nil, &Error{Kind: KindHostKey, Detail: err.Error()}
	}
	a.cfg.HostKeyCallback = db.HostKeyCallback()
	// Ask only for the key types known_hosts holds for this switch: a
	// switch with RSA, ECDSA and Ed25519 keys would otherwise offer the
	// one x/crypto prefers, and a known_hosts with another type would look
	// like a changed key.
	a.cfg.HostKeyAlgorithms = db.HostKeyAlgorithms(addr)
	return a, nil
}

// agentAuth connects to the ssh-agent at SSH_AUTH_SOCK and offers its
// keys. The connection stays open until the handshake is over.
func agentAuth(c *spec.Credentials, getenv func(string) string, timeout time.Duration, a *clientAuth) (ssh.AuthMethod, error) {
	sock := getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, fmt.Errorf("credentials %q ask for the ssh-agent (ssh_agent = true) but SSH_AUTH_SOCK is not set: start an agent (eval $(ssh-agent)) and add the key with ssh-add", c.Name)
	}
	conn, err := net.DialTimeout("unix", sock, timeout)
	if err != nil {
		why := "cannot connect"
		switch {
		case errors.Is(err, os.ErrNotExist):
			why = "no such socket (the agent is not running, or SSH_AUTH_SOCK is stale)"
		case errors.Is(err, syscall.ECONNREFUSED):
			why = "connection refused (the agent is not running, SSH_AUTH_SOCK is stale)"
		case errors.Is(err, os.ErrPermission):
			why = "permission denied"
		}
		return nil, fmt.Errorf("credentials %q ask for the ssh-agent: SSH_AUTH_SOCK %s: %s", c.Name, sock, why)
	}
	a.closers = append(a.closers, func() { conn.Close() })
	ag := agent.NewClient(conn)
	keys, err := ag.List()
	if err != nil {
		return nil, fmt.Errorf("credentials %q ask for the ssh-agent: SSH_AUTH_SOCK %s does not answer as an agent: %v", c.Name, sock, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("credentials %q ask for the ssh-agent, but the agent at %s holds no keys: add one with ssh-add", c.Name, sock)
	}
	a.tried = append(a.tried, fmt.Sprintf("ssh-agent (%d key(s))", len(keys)))
	return ssh.PublicKeysCallback(ag.Signers), nil
}

// known_hosts databases parsed once per file version: a plan of 64
// switches sharing one known_hosts file parsed it 64 times (3.5% of the
// plan's CPU in the 64-switch benchmark). A changed file (size, mtime or
// inode) is parsed again.
var khCache struct {
	sync.Mutex
	m map[string]khEntry
}

type khEntry struct {
	db   *knownhosts.HostKeyDB
	size int64
	mod  time.Time
	ino  uint64
}

func hostKeyDB(path string) (*knownhosts.HostKeyDB, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("no known_hosts file %s (add the switch's key there, or skip verification explicitly with --insecure)", path)
	}
	var ino uint64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		ino = sys.Ino
	}
	khCache.Lock()
	defer khCache.Unlock()
	if e, ok := khCache.m[path]; ok && e.size == st.Size() && e.mod.Equal(st.ModTime()) && e.ino == ino {
		return e.db, nil
	}
	db, err := parseKnownHosts(path)
	if err != nil {
		return nil, err
	}
	if khCache.m == nil {
		khCache.m = map[string]khEntry{}
	}
	khCache.m[path] = khEntry{db: db, size: st.Size(), mod: st.ModTime(), ino: ino}
	return db, nil
}

// parseKnownHosts reads a known_hosts file the safe way (safefile: a
// regular file of at most 16 MiB; a FIFO or /dev/zero named by a spec
// would block or never end) and parses that content. knownhosts.NewDB
// opens files by name, so the bytes read are handed to it as a private
// copy (an exclusive file in a new 0700 directory), never the path again.
func parseKnownHosts(path string) (*knownhosts.HostKeyDB, error) {
	b, err := safefile.ReadFile(path, safefile.KnownHosts)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fabctl-known-hosts-")
	if err != nil {
		return nil, fmt.Errorf("known_hosts file %s: %v", path, err)
	}
	defer os.RemoveAll(dir)
	cp := filepath.Join(dir, "known_hosts")
	f, err := safefile.CreateExclusive(cp, 0o600, safefile.KnownHosts)
	if err == nil {
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return nil, fmt.Errorf("known_hosts file %s: %v", path, err)
	}
	db, err := knownhosts.NewDB(cp)
	if err != nil {
		// Name the spec's file, not the private copy.
		return nil, fmt.Errorf("known_hosts file %s: %s", path, strings.ReplaceAll(err.Error(), cp, path))
	}
	return db, nil
}
