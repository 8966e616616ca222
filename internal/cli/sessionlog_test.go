package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/portlink"
)

// TestDebugSessionLog: plan against an EOS emulator with --debug-file
// writes the SSH session transcript (commands and answers) to the file,
// and --debug to stderr; neither holds the login password.
func TestDebugSessionLog(t *testing.T) {
	const pw = "Cli-debug-Pa55"
	dir, _ := eosLab(t, pw)
	logFile := filepath.Join(dir, "ssh.log")
	f, _, out, errOut := testFactory("FABCTL_TEST_SWITCH_PW=" + pw) // the command's environment; the drivers read the process's
	if code := runCLI(f, "plan", "--debug-file", logFile, "--state-dir", filepath.Join(dir, "state"), dir); code != ExitOK {
		t.Fatalf("plan exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	b, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{"leaf1 > show running-config", "leaf2 > show running-config", "leaf1 < end"} {
		if !strings.Contains(log, want) {
			t.Errorf("--debug-file log lacks %q", want)
		}
	}
	if strings.Contains(log, pw) || strings.Contains(errOut.String(), pw) || strings.Contains(out.String(), pw) {
		t.Error("the password appears in the output")
	}
	if strings.Contains(errOut.String(), "> show running-config") {
		t.Error("with --debug-file the transcript went to stderr too")
	}
	if st, err := os.Stat(logFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("log file mode: %v %v", st.Mode(), err)
	}

	f, _, out, errOut = testFactory("FABCTL_TEST_SWITCH_PW=" + pw)
	if code := runCLI(f, "plan", "--debug", "--state-dir", filepath.Join(dir, "state"), dir); code != ExitOK {
		t.Fatalf("plan --debug exit %d\nstderr: %s", code, errOut)
	}
	if !strings.Contains(errOut.String(), "leaf2 > show running-config") || strings.Contains(errOut.String(), pw) {
		t.Errorf("--debug: transcript missing from stderr, or the password in it:\n%s", errOut)
	}
	if t.Failed() {
		t.Logf("log:\n%s", log)
	}
}

// eosLab starts two EOS emulators, leaf1 and leaf2, logging in with pw
// (read from FABCTL_TEST_SWITCH_PW, which it sets), and writes a spec
// linking them into a temporary directory.
func eosLab(t *testing.T, pw string) (string, []*eosemu.Switch) {
	t.Helper()
	t.Setenv("FABCTL_TEST_SWITCH_PW", pw)
	var addrs []string
	var emus []*eosemu.Switch
	var kh strings.Builder
	links := map[string]portlink.Static{}
	for i := 0; i < 2; i++ {
		name := fmt.Sprintf("leaf%d", i+1)
		links[name] = portlink.Static{}
		sw, err := eosemu.Start(eosemu.Options{Hostname: name, Password: pw, Ports: 2, Links: links[name]})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sw.Close() })
		emus = append(emus, sw)
		addrs = append(addrs, sw.Addr())
		kh.WriteString(sw.KnownHostsLine() + "\n")
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "known_hosts"), kh.String())
	writeFile(t, filepath.Join(dir, "lab.fab.hcl"), fmt.Sprintf(`fabric "lab" {
  transport = "rocev2"
  mtu       = 9000
  rdma_mtu  = 4096
}

credentials "ssh" {
  username    = "admin"
  password    = env("FABCTL_TEST_SWITCH_PW")
  known_hosts = "known_hosts"
}

switch "leaf1" {
  platform    = "eos"
  address     = %q
  credentials = "ssh"
  role        = "leaf"
}

switch "leaf2" {
  platform    = "eos"
  address     = %q
  credentials = "ssh"
  role        = "leaf"
}

link {
  endpoints    = ["leaf1:Ethernet1", "leaf2:Ethernet1"]
  speed        = "100G"
  cable_length = "3m"
}
`, addrs[0], addrs[1]))
	cable(t, dir, []string{"FABCTL_TEST_SWITCH_PW=" + pw}, links)
	return dir, emus
}
