package sonicemu

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	gossh "golang.org/x/crypto/ssh"
)

const prompt = "admin@sonic:~$ "

type term struct {
	t   *testing.T
	in  io.Writer
	out chan []byte
	buf bytes.Buffer
}

func login(t *testing.T, sw *Switch) *term {
	t.Helper()
	c, err := gossh.Dial("tcp", sw.Addr(), &gossh.ClientConfig{User: "admin",
		Auth: []gossh.AuthMethod{gossh.Password("pw")}, HostKeyCallback: gossh.FixedHostKey(sw.HostKey())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, _ := c.NewSession()
	if err := s.RequestPty("xterm", 24, 512, gossh.TerminalModes{}); err != nil {
		t.Fatal(err)
	}
	in, _ := s.StdinPipe()
	r, _ := s.StdoutPipe()
	if err := s.Shell(); err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, in: in, out: make(chan []byte, 64)}
	go func() {
		b := make([]byte, 8192)
		for {
			n, err := r.Read(b)
			if n > 0 {
				tm.out <- append([]byte(nil), b[:n]...)
			}
			if err != nil {
				close(tm.out)
				return
			}
		}
	}()
	tm.wait(prompt)
	return tm
}

func (tm *term) wait(suffix string) string {
	tm.t.Helper()
	to := time.After(5 * time.Second)
	for !strings.HasSuffix(tm.buf.String(), suffix) {
		select {
		case b, ok := <-tm.out:
			if !ok {
				tm.t.Fatalf("connection closed; output %q", tm.buf.String())
			}
			tm.buf.Write(b)
		case <-to:
			tm.t.Fatalf("timeout waiting for %q; output %q", suffix, tm.buf.String())
		}
	}
	s := tm.buf.String()
	tm.buf.Reset()
	return s
}

// cmd runs one line and returns its output without echo and prompt.
func (tm *term) cmd(line string) string {
	tm.t.Helper()
	io.WriteString(tm.in, line+"\n")
	out := tm.wait(prompt)
	out = strings.TrimPrefix(out, line+"\r\n")
	return strings.ReplaceAll(strings.TrimSuffix(out, prompt), "\r\n", "\n")
}

// write stores a file with a heredoc, line by line like a client does.
func (tm *term) write(path, content string) {
	tm.t.Helper()
	io.WriteString(tm.in, "cat > "+path+" <<'EOF'\n")
	tm.wait("> ")
	for _, l := range strings.Split(strings.TrimSuffix(content, "\n"), "\n") {
		io.WriteString(tm.in, l+"\n")
		tm.wait("> ")
	}
	io.WriteString(tm.in, "EOF\n")
	tm.wait(prompt)
}

func start(t *testing.T) *Switch {
	t.Helper()
	sw, err := Start(Options{Password: "pw", Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	return sw
}

func TestShellBasics(t *testing.T) {
	sw := start(t)
	tm := login(t, sw)
	if got := tm.cmd("foo --bar"); got != "-bash: foo: command not found\n" {
		t.Fatalf("unknown: %q", got)
	}
	if got := tm.cmd("echo $?"); got != "127\n" {
		t.Fatalf("$?: %q", got)
	}
	if got := tm.cmd("config checkpoint x"); !strings.Contains(got, "Root privileges are required") {
		t.Fatalf("no sudo: %q", got)
	}
	if got := tm.cmd("sudo config frobnicate"); !strings.Contains(got, `Error: No such command 'frobnicate'.`) {
		t.Fatalf("bad subcommand: %q", got)
	}
	var db map[string]any
	if err := json.Unmarshal([]byte(tm.cmd("show runningconfiguration all")), &db); err != nil {
		t.Fatal(err)
	}
	if len(keysOf(db, "PORT")) != 4 {
		t.Fatalf("ports: %v", db["PORT"])
	}
	tm.write("/tmp/a.txt", "hello\nworld")
	if got := tm.cmd("cat /tmp/a.txt"); got != "hello\nworld\n" {
		t.Fatalf("heredoc: %q", got)
	}
}

func TestApplyPatchAllOrNothing(t *testing.T) {
	sw := start(t)
	tm := login(t, sw)
	before := sw.RunningConfig()

	// The second op fails: nothing of the first may land.
	tm.write("/tmp/p.json", `[
{"op": "add", "path": "/PORT/Ethernet0/mtu", "value": "9000"},
{"op": "remove", "path": "/PORT/Ethernet0/nosuch"}
]`)
	out := tm.cmd("sudo config apply-patch /tmp/p.json")
	if !strings.Contains(out, "Failed to apply patch due to: can't remove a non-existent object 'nosuch'") {
		t.Fatalf("failure text: %q", out)
	}
	if tm.cmd("echo $?") != "2\n" {
		t.Fatal("exit status")
	}
	if !bytes.Equal(before, sw.RunningConfig()) {
		t.Fatal("failed patch changed the config")
	}

	// YANG range: PORT mtu 68..9216.
	tm.write("/tmp/p.json", `[{"op": "replace", "path": "/PORT/Ethernet0/mtu", "value": "9300"}]`)
	if out := tm.cmd("sudo config apply-patch /tmp/p.json"); !strings.Contains(out, "Given patch will produce invalid config") {
		t.Fatalf("range: %q", out)
	}
	// Leafref: a QoS map on a port that does not exist.
	tm.write("/tmp/p.json", `[{"op": "add", "path": "/PFC_WD/Ethernet99", "value": {"action": "drop"}}]`)
	if out := tm.cmd("sudo config apply-patch /tmp/p.json"); !strings.Contains(out, "points to a non-existing leaf") {
		t.Fatalf("leafref: %q", out)
	}
	// Empty table.
	tm.write("/tmp/p.json", `[{"op": "add", "path": "/WRED_PROFILE", "value": {}}]`)
	if out := tm.cmd("sudo config apply-patch /tmp/p.json"); !strings.Contains(out, "empty tables which is not allowed in ConfigDb. Table: WRED_PROFILE") {
		t.Fatalf("empty table: %q", out)
	}
	// The dry run runs the same validators: the same refusal.
	if out := tm.cmd("sudo config apply-patch --dry-run /tmp/p.json"); !strings.HasPrefix(out, "** DRY RUN EXECUTION **\n") ||
		!strings.Contains(out, "empty tables which is not allowed in ConfigDb. Table: WRED_PROFILE") {
		t.Fatalf("empty table, dry run: %q", out)
	}
	if !bytes.Equal(before, sw.RunningConfig()) {
		t.Fatal("rejected patches changed the config")
	}
	// Dry run changes nothing; a real run applies.
	tm.write("/tmp/p.json", `[{"op": "add", "path": "/DSCP_TO_TC_MAP", "value": {"AZURE": {"3": "3"}}},
{"op": "add", "path": "/PORT_QOS_MAP", "value": {"Ethernet0": {"dscp_to_tc_map": "[DSCP_TO_TC_MAP|AZURE]", "pfc_enable": "3"}}}]`)
	if out := tm.cmd("sudo config apply-patch --dry-run /tmp/p.json"); !strings.HasSuffix(out, "Patch applied successfully.\n") {
		t.Fatalf("dry run: %q", out)
	}
	if !bytes.Equal(before, sw.RunningConfig()) {
		t.Fatal("dry run changed the config")
	}
	if out := tm.cmd("sudo config apply-patch /tmp/p.json"); !strings.HasSuffix(out, "Patch applied successfully.\n") {
		t.Fatalf("apply: %q", out)
	}
	if !strings.Contains(string(sw.RunningConfig()), `"pfc_enable": "3"`) {
		t.Fatal("patch not applied")
	}
}

func TestCheckpointRollback(t *testing.T) {
	sw := start(t)
	tm := login(t, sw)
	before := sw.RunningConfig()
	if out := tm.cmd("sudo config checkpoint cp1"); !strings.HasSuffix(out, "Checkpoint created successfully.\n") {
		t.Fatalf("checkpoint: %q", out)
	}
	tm.write("/tmp/p.json", `[{"op": "replace", "path": "/PORT/Ethernet4/mtu", "value": "1500"}]`)
	tm.cmd("sudo config apply-patch /tmp/p.json")
	if bytes.Equal(before, sw.RunningConfig()) {
		t.Fatal("patch had no effect")
	}
	if out := tm.cmd("config list-checkpoints"); !strings.Contains(out, "Root privileges") {
		t.Fatalf("list without sudo: %q", out)
	}
	if out := tm.cmd("sudo config list-checkpoints"); !strings.Contains(out, `"cp1"`) {
		t.Fatalf("list: %q", out)
	}
	if out := tm.cmd("sudo config rollback cp1"); !strings.HasSuffix(out, "Config rolled back successfully.\n") {
		t.Fatalf("rollback: %q", out)
	}
	if !bytes.Equal(before, sw.RunningConfig()) {
		t.Fatal("rollback is not byte-identical")
	}
	if out := tm.cmd("sudo config delete-checkpoint cp1"); !strings.HasSuffix(out, "Checkpoint deleted successfully.\n") {
		t.Fatalf("delete: %q", out)
	}
	if out := tm.cmd("sudo config rollback cp1"); !strings.Contains(out, "Checkpoint 'cp1' does not exist") {
		t.Fatalf("rollback missing: %q", out)
	}
}

func TestJSONPatchRFC6902(t *testing.T) {
	doc := map[string]any{"a": map[string]any{"b": "1"}, "l": []any{"x", "y"}}
	ops, err := parsePatch([]byte(`[
{"op":"test","path":"/a/b","value":"1"},
{"op":"copy","from":"/a","path":"/c"},
{"op":"move","from":"/a/b","path":"/a/d"},
{"op":"add","path":"/l/1","value":"z"},
{"op":"remove","path":"/l/0"},
{"op":"add","path":"/l/-","value":"w"},
{"op":"replace","path":"/c~1x","value":1}]`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applyPatch(doc, ops); err == nil || !strings.Contains(err.Error(), "can't replace a non-existent object 'c/x'") {
		t.Fatalf("want replace error, got %v", err)
	}
	out, err := applyPatch(doc, ops[:6])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	if string(b) != `{"a":{"d":"1"},"c":{"b":"1"},"l":["z","y","w"]}` {
		t.Fatal(string(b))
	}
	if b, _ := json.Marshal(doc); string(b) != `{"a":{"b":"1"},"l":["x","y"]}` {
		t.Fatal("input changed: ", string(b))
	}
}

// TestSaveReloadStrict: config save writes the startup configuration,
// Reload brings it back, FailSave prints and saves nothing, and undocumented
// commands are refused with click's and bash's words.
func TestSaveReloadStrict(t *testing.T) {
	sw := start(t)
	tm := login(t, sw)
	start0 := sw.StartupConfig()
	sw.Edit(func(db map[string]any) {
		db["PORT"].(map[string]any)["Ethernet0"].(map[string]any)["mtu"] = "1500"
	})
	if got := tm.cmd("sudo config save"); !strings.Contains(got, "Aborted!") {
		t.Fatalf("save without -y: %q", got)
	}
	sw.FailSave("/bin/sh: 1: cannot create /etc/sonic/config_db.json: Read-only file system")
	if got := tm.cmd("sudo config save -y"); !strings.Contains(got, "Read-only file system") || string(sw.StartupConfig()) != string(start0) {
		t.Fatalf("failed save: %q", got)
	}
	sw.FailSave("")
	if got := tm.cmd("sudo config save -y"); got != "Running command: /usr/local/bin/sonic-cfggen -d --print-data > /etc/sonic/config_db.json\n" {
		t.Fatalf("save: %q", got)
	}
	if !strings.Contains(tm.cmd("sonic-cfggen -j /etc/sonic/config_db.json --print-data"), `"mtu": "1500"`) {
		t.Fatal("saved config lacks the change")
	}
	sw.Edit(func(db map[string]any) {
		db["PORT"].(map[string]any)["Ethernet0"].(map[string]any)["mtu"] = "9100"
	})
	tm.cmd("sudo config checkpoint keep")
	sw.Reload()
	if !strings.Contains(string(sw.RunningConfig()), `"mtu": "1500"`) || len(sw.Checkpoints()) != 1 {
		t.Fatal("reload did not restore the saved config or lost the checkpoint")
	}
	if !strings.Contains(string(sw.RunningConfig()), `"bgpraw"`) || strings.Contains(tm.cmd("sonic-cfggen -d --print-data"), "bgpraw") {
		t.Fatal("bgpraw: only show runningconfiguration all carries it")
	}
	for cmd, want := range map[string]string{
		"sudo config reload -y":             "Error: No such command 'reload'.",
		"sudo config apply-patch --bogus x": "Error: No such option: --bogus",
		"show running-config":               "Error: No such command 'running-config'.",
		"show runningconfiguration bgp":     "Error: No such command 'bgp'.",
		"sonic-cfggen -d --var-json PORT":   "sonic-cfggen: error: unrecognized arguments",
		"redis-cli -n 4 keys *":             "-bash: redis-cli: command not found",
		"sudo config apply-patch":           "Error: Missing argument 'PATCH_FILE_PATH'.",
		"sudo config save -y a b":           "Got unexpected extra argument (b)",
		"sudo config checkpoint":            "Try 'config checkpoint -h' for help.",
	} {
		if got := tm.cmd(cmd); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", cmd, got, want)
		}
	}
}

// TestBuffermgrdTraditional: in the traditional model a pfc_enable on a
// port with a known speed and cable makes buffermgrd's PG row and profile.
func TestBuffermgrdTraditional(t *testing.T) {
	sw, err := Start(Options{Password: "pw", Ports: 4, BufferModel: "traditional"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	tm := login(t, sw)
	tm.write("/tmp/p.json", `[{"op":"add","path":"/CABLE_LENGTH","value":{"AZURE":{"Ethernet0":"5m","Ethernet4":"1m"}}},
{"op":"add","path":"/PORT_QOS_MAP","value":{"Ethernet0":{"pfc_enable":"3,4"},"Ethernet4":{"pfc_enable":"3"}}}]`)
	if got := tm.cmd("sudo config apply-patch /tmp/p.json"); !strings.Contains(got, "Patch applied successfully.") {
		t.Fatal(got)
	}
	run := string(sw.RunningConfig())
	if !strings.Contains(run, `"Ethernet0|3-4": {`) || !strings.Contains(run, `"pg_lossless_100000_5m_profile": {`) {
		t.Fatalf("buffermgrd rows missing:\n%s", run)
	}
	if strings.Contains(run, `"Ethernet4|3"`) {
		t.Fatal("a cable without a pg_profile_lookup.ini entry got a PG")
	}
	if sw.SAIPortMTU("Ethernet0") != 9122 {
		t.Fatalf("SAI MTU %d", sw.SAIPortMTU("Ethernet0"))
	}
}
