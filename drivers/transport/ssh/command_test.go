package sshtransport

import (
	"regexp"
	"testing"
)

func TestCommandOutput(t *testing.T) {
	// arista_eos's joined privilege patterns (scrapligo v1.4.3
	// assets/platforms/arista_eos.yaml) and SONiC's bash prompt.
	eos := regexp.MustCompile(`(?im)(^[\w.\-@()/: ]{1,63}>\s?$)|(^[\w.\-@()/: ]{1,63}#\s?$)|(^[\w.\-@()/: ]{1,63}\(config[\w.\-@/:]{0,63}\)#\s?$)`)
	sonic := regexp.MustCompile(`(?im)^[\w.\-]+@[\w.\-]+:\S+\$\s*$`)
	for _, tc := range []struct {
		name   string
		in     string
		prompt *regexp.Regexp
		want   string
	}{
		{"output and prompt", "interface Ethernet1\n   mtu 9000\n!\nleaf1#", eos, "interface Ethernet1\n   mtu 9000\n!"},
		{"trailing spaces and blank lines", "\nline one   \nline two \n\nleaf1#", eos, "line one\nline two"},
		{"no output", "leaf1(config-s-fabctl)#", eos, ""},
		{"prompt with a space", "{}\nadmin@sonic:~$ ", sonic, "{}"},
		{"a prompt-like line stays when it is not last", "leaf2#\nend\nleaf1#", eos, "leaf2#\nend"},
	} {
		if got := string(commandOutput([]byte(tc.in), tc.prompt)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestEchoEnd(t *testing.T) {
	for _, tc := range []struct {
		buf, cmd string
		want     int
	}{
		{"show run\n", "show run", 8},
		{"\nleaf1#show run\n", "show run", 15},
		// A device that wraps a long echo inserts characters; the
		// command's characters still come in order.
		{"show runn \bing-config\n", "show running-config", 21},
		{"show ru", "show run", -1},
		{"anything", "", 0},
	} {
		if got := echoEnd([]byte(tc.buf), []byte(tc.cmd)); got != tc.want {
			t.Errorf("echoEnd(%q, %q) = %d, want %d", tc.buf, tc.cmd, got, tc.want)
		}
	}
}
