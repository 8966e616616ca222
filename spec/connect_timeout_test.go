package spec

import (
	"strings"
	"testing"
	"time"
)

// credentials connect_timeout: a duration above zero bounds each
// connection attempt of the devices using the block (gNMI, SSH).
func TestCredentialsConnectTimeout(t *testing.T) {
	with := func(v string) string {
		return strings.Replace(base, `password = env("FAB_PW")`, `password = env("FAB_PW")`+"\n  connect_timeout = "+v, 1)
	}
	for _, c := range []struct {
		val  string
		want time.Duration
		err  string
	}{
		{`"30s"`, 30 * time.Second, ""},
		{`"1m"`, time.Minute, ""},
		{`"0s"`, 0, "connect_timeout must be above zero"},
		{`"soon"`, 0, "Invalid duration"},
	} {
		s, diags := load(t, with(c.val), LoadOptions{Platforms: testPlatforms})
		if c.err != "" {
			if !diags.HasErrors() || !strings.Contains(diags.Error(), c.err) {
				t.Errorf("connect_timeout = %s: want %q, got %v", c.val, c.err, diags)
			}
			continue
		}
		if diags.HasErrors() {
			t.Fatalf("connect_timeout = %s: %v", c.val, diags)
		}
		if got := s.CredentialsByName("sw").ConnectTimeout; got != c.want {
			t.Errorf("connect_timeout = %s: %v, want %v", c.val, got, c.want)
		}
	}
	s, diags := load(t, base, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() || s.CredentialsByName("sw").ConnectTimeout != 0 {
		t.Errorf("default connect_timeout: %v %v", s.CredentialsByName("sw").ConnectTimeout, diags)
	}
}
