package spec

import (
	"strings"
	"testing"
)

// TestCredentialsAgentAndEnable: ssh_agent is a plain bool (the agent is
// asked only when the spec says so); enable_password is a secret
// reference like password and refuses a literal.
func TestCredentialsAgentAndEnable(t *testing.T) {
	src := strings.Replace(base, `  password = env("FAB_PW")`, `  ssh_agent       = true
  enable_password = file("/run/secrets/enable")`, 1)
	s, diags := load(t, src, LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := s.CredentialsByName("sw")
	if !c.SSHAgent || c.Password != nil || c.EnablePassword == nil || c.EnablePassword.Kind != "file" || c.EnablePassword.Name != "/run/secrets/enable" {
		t.Fatalf("credentials: %+v", c)
	}
	if s, _ := load(t, base, LoadOptions{Platforms: testPlatforms}); s.CredentialsByName("sw").SSHAgent {
		t.Fatal("ssh_agent defaults to true")
	}

	bad := strings.Replace(base, `  password = env("FAB_PW")`, `  password = env("FAB_PW")
  enable_password = "plain"`, 1)
	if _, diags := load(t, bad, LoadOptions{Platforms: testPlatforms}); !diags.HasErrors() || !strings.Contains(diags.Error(), "Secret must be a reference") {
		t.Fatalf("literal enable_password: %v", diags)
	}
	bad = strings.Replace(base, `  password = env("FAB_PW")`, `  password = env("FAB_PW")
  ssh_agent = "yes please"`, 1)
	if _, diags := load(t, bad, LoadOptions{Platforms: testPlatforms}); !diags.HasErrors() {
		t.Fatal("ssh_agent = \"yes please\" accepted")
	}
}
