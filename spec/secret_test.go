package spec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Issue 35/37: env() and file() resolve in one place, with one trimming
// rule, the safe-file rules and a size cap; an error names the reference
// (and a file's path), never a value, and never blocks.
func TestSecretResolve(t *testing.T) {
	dir := t.TempDir()
	specFile := filepath.Join(dir, "spec", "a.fab.hcl")
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("pw", "  s3cret pass \r\n\n")
	write("empty", "\n")
	write("big", strings.Repeat("k", 64<<10+1))
	write("key", "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "pw"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PW": "hunter22\n", "EMPTY": "", "SPACES": " a b "}
	getenv := func(k string) string { return env[k] }
	file := func(p string) SecretRef {
		return SecretRef{Kind: "file", Name: p, Src: hcl.Range{Filename: specFile}}
	}
	for _, c := range []struct {
		ref  SecretRef
		want string
		err  string
	}{
		{SecretRef{Kind: "env", Name: "PW"}, "hunter22", ""},
		{SecretRef{Kind: "env", Name: "SPACES"}, " a b ", ""},
		{SecretRef{Kind: "env", Name: "EMPTY"}, "", "is not set"},
		{SecretRef{Kind: "env", Name: "UNSET"}, "", "is not set"},
		{file("../pw"), "  s3cret pass ", ""}, // relative to the spec file's directory
		{file(filepath.Join(dir, "link")), "  s3cret pass ", ""},
		{file("../key"), "-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----", ""},
		{file("../empty"), "", "is empty"},
		{file("../big"), "", "larger than 64 KiB"},
		{file("../fifo"), "", "FIFO"},
		{file("../zero"), "", "character device"},
		{file("../dangling"), "", "symbolic link to a file that does not exist"},
		{file("../adir"), "", "directory"},
		{file("../missing"), "", "does not exist"},
		{SecretRef{Kind: "vault", Name: "x"}, "", "unknown kind"},
	} {
		var got string
		var err error
		done := make(chan struct{})
		go func() { defer close(done); got, err = c.ref.Resolve(getenv) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s blocked", c.ref)
		}
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("%s: %q, %v; want %q", c.ref, got, err, c.want)
			}
			continue
		}
		var se *SecretError
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.ref.String()) {
			t.Errorf("%s: %q, %v; want an error saying %q", c.ref, got, err, c.err)
		}
		if c.ref.Kind == "file" && !strings.Contains(err.Error(), c.ref.Path()) {
			t.Errorf("%s: the error does not name %s: %v", c.ref, c.ref.Path(), err)
		}
		for _, v := range []string{"hunter22", "s3cret", "kkkkkkkk", "MIIEvQ"} {
			if strings.Contains(err.Error(), v) {
				t.Errorf("%s: the error shows a secret value: %v", c.ref, err)
			}
		}
	}
	if _, err := file("../missing").Resolve(getenv); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file is not fs.ErrNotExist: %v", err)
	}
}

func TestSecretMasks(t *testing.T) {
	if Masks("") != nil {
		t.Error("an empty value has masks")
	}
	got := Masks("-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nshort\n-----END KEY-----")
	want := []string{"-----BEGIN KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nshort\n-----END KEY-----", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Masks = %q, want %q", got, want)
	}
}
