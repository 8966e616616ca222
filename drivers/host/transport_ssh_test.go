package host

import (
	"strings"
	"testing"
)

// Pure helpers of the SSH transport; the transport itself is tested
// against OpenSSH in ssh_test.go.

func TestShellPath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"~/.cache/fabctl/fabctl-ab", `"$HOME"/'.cache/fabctl/fabctl-ab'`},
		{"/opt/fab ctl/fabctl", `'/opt/fab ctl/fabctl'`},
		{"/tmp/it's", `'/tmp/it'\''s'`},
		{"~root/x", `'~root/x'`},
	}
	for _, tt := range tests {
		if got := shellPath(tt.in); got != tt.want {
			t.Errorf("shellPath(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestSudoProblem(t *testing.T) {
	tests := []struct{ stderr, want string }{
		{"sudo: a password is required\n", "sudo needs a password for u: fabctl runs sudo -n"},
		{"sudo: a terminal is required to read the password; either use the -S option", "sudo needs a password for u"},
		{"u is not in the sudoers file.  This incident will be reported.\n", "u may not run the agent with sudo"},
		{"Sorry, user u is not allowed to execute '/x agent' as root on h.\n", "u may not run the agent with sudo"},
		{"sh: 1: sudo: not found\n", "sudo is not installed on the host"},
		{"panic: boom\n", ""},
	}
	for _, tt := range tests {
		k, d := sudoProblem(tt.stderr, "u", "~/.cache/fabctl/fabctl-ab")
		if tt.want == "" {
			if k != "" {
				t.Errorf("%q: %s %s", tt.stderr, k, d)
			}
			continue
		}
		if k != KindSudo || !strings.Contains(d, tt.want) {
			t.Errorf("%q: %s %q, want %q", tt.stderr, k, d, tt.want)
		}
	}
}

func TestCauseLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"internal error: runtime error: index out of range\n\nThis is a bug in fabctl\nRun the command again with --debug\n", "internal error: runtime error: index out of range"},
		{"Error: unknown flag: --version-check\nRun 'fabctl agent --help' for usage.\n", "Error: unknown flag: --version-check"},
		{"line one\nline two\n", "line two"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := causeLine([]byte(tt.in)); got != tt.want {
			t.Errorf("causeLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
