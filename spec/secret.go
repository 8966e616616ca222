package spec

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/fabctl/fabctl/internal/safefile"
)

// Resolve returns the value a secret reference points at: env(NAME)
// through getenv (nil: os.Getenv), file(PATH) read at Path() through
// safefile (a regular file of at most 64 KiB; links are followed, as
// Kubernetes mounts secrets as links; a FIFO, device or directory is
// refused without blocking). One trimming rule for both kinds: trailing
// line breaks (\r, \n) are removed, nothing else (a password may begin
// or end with spaces). An unset or empty value, an unreadable file or an
// unknown kind is a *SecretError naming the reference, never the value.
//
// This is the one resolver: the SSH and gNMI transports, apply's journal
// redaction and the CLI's check before any device is contacted all call
// it, so what the check passes is what a transport sends.
func (s SecretRef) Resolve(getenv func(string) string) (string, error) {
	var v string
	switch s.Kind {
	case "env":
		if getenv == nil {
			getenv = os.Getenv
		}
		v = getenv(s.Name)
		if v == "" {
			return "", &SecretError{Ref: s, Problem: "is not set"}
		}
	case "file":
		b, err := safefile.ReadFile(s.Path(), safefile.Secret)
		if err != nil {
			problem := "cannot be read (" + s.Path() + ")"
			var se *safefile.Error
			if errors.As(err, &se) {
				problem = "cannot be read: " + se.Path + " " + se.Problem
			}
			return "", &SecretError{Ref: s, Problem: problem, Err: err}
		}
		v = string(b)
	default:
		return "", &SecretError{Ref: s, Problem: fmt.Sprintf("has an unknown kind %q (want env or file)", s.Kind)}
	}
	v = strings.TrimRight(v, "\r\n")
	if v == "" {
		problem := "is empty"
		if s.Kind == "file" {
			problem = "is empty (" + s.Path() + ")"
		}
		return "", &SecretError{Ref: s, Problem: problem}
	}
	return v, nil
}

// SecretError says why a secret reference cannot be resolved. It names
// the reference (and for a file, its path), never a value.
type SecretError struct {
	Ref     SecretRef
	Problem string // "is not set", "is empty", "cannot be read: ..."
	Err     error
}

func (e *SecretError) Error() string { return fmt.Sprintf("secret %s %s", e.Ref, e.Problem) }

// Unwrap returns the file error, if any.
func (e *SecretError) Unwrap() error { return e.Err }

// Masks are the strings to mask wherever text fabctl prints could hold
// the secret value v: the value, and for a multi-line value (a key) each
// line of at least 16 characters, so a log that wraps or re-indents it
// still does not show it. PEM armour lines are not secret.
func Masks(v string) []string {
	if v == "" {
		return nil
	}
	out := []string{v}
	if strings.Contains(v, "\n") {
		for _, line := range strings.Split(v, "\n") {
			if line = strings.TrimSpace(line); len(line) >= 16 && !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
	}
	return out
}

// Secrets lists the secret references of the credentials, in a fixed
// order (password, private_key, passphrase, enable_password, token)
// with their attribute names.
func (c *Credentials) Secrets() []NamedSecret {
	if c == nil {
		return nil
	}
	var out []NamedSecret
	for _, r := range []NamedSecret{{"password", c.Password}, {"private_key", c.PrivateKey}, {"passphrase", c.Passphrase},
		{"enable_password", c.EnablePassword}, {"token", c.Token}} {
		if r.Ref != nil {
			out = append(out, r)
		}
	}
	return out
}

// NamedSecret is one secret attribute of a credentials block.
type NamedSecret struct {
	Attr string
	Ref  *SecretRef
}
