package nxosemu

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

const pw = "emu-Pa55"

// dial connects with scrapligo's built-in cisco_nxos platform.
func dial(t *testing.T) (*Switch, *sshtransport.Conn) {
	t.Helper()
	sw, err := Start(Options{Password: pw, Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := sw.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	tg := drivers.Target{Device: intent.Device{Kind: intent.KindSwitch, Name: "leaf", Platform: "nxos", Address: sw.Addr()},
		Credentials: &spec.Credentials{Name: "lab", Username: "admin", Password: &spec.SecretRef{Kind: "env", Name: "PW"}, KnownHosts: kh}}
	c, err := sshtransport.Dial(context.Background(), tg, sshtransport.Options{Platform: "cisco_nxos", ConnectTimeout: 3 * time.Second,
		CommandTimeout: 3 * time.Second, Getenv: func(string) string { return pw }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return sw, c
}

func send(t *testing.T, c *sshtransport.Conn, lines ...string) string {
	t.Helper()
	var out string
	for _, l := range lines {
		o, err := c.Send(l)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		out += o
	}
	return out
}

var roce = []string{
	"configure terminal",
	"class-map type qos match-any ROCEv2", "match dscp 24-31",
	"class-map type qos match-any CNP", "match dscp 48",
	"policy-map type qos QOS_CLASSIFICATION", "class ROCEv2", "set qos-group 3", "class CNP", "set qos-group 7",
	"policy-map type queuing QOS_EGRESS_PORT", "class type queuing c-out-8q-q3", "bandwidth remaining percent 50",
	"random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn",
	"class type queuing c-out-8q-q7", "priority level 1",
	"policy-map type network-qos qos_network", "class type network-qos c-8q-nq3", "mtu 9216", "pause pfc-cos 3",
	"system qos", "service-policy type queuing output QOS_EGRESS_PORT", "service-policy type network-qos qos_network",
	"priority-flow-control watch-dog-interval on",
	"interface Ethernet1/1", "priority-flow-control mode on", "priority-flow-control watch-dog-interval on",
	"mtu 9216", "service-policy type qos input QOS_CLASSIFICATION",
	"end",
}

func TestBlueprintAndShow(t *testing.T) {
	sw, c := dial(t)
	send(t, c, roce...)
	run := send(t, c, "show running-config")
	for _, want := range []string{
		"!Command: show running-config\n",
		"class-map type qos match-any CNP\n  match dscp 48\nclass-map type qos match-any ROCEv2\n  match dscp 24-31\n",
		"policy-map type qos QOS_CLASSIFICATION\n  class ROCEv2\n    set qos-group 3\n  class CNP\n    set qos-group 7\n",
		"policy-map type queuing QOS_EGRESS_PORT\n  class type queuing c-out-8q-q3\n    bandwidth remaining percent 50\n    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn\n  class type queuing c-out-8q-q7\n    priority level 1\n",
		"policy-map type network-qos qos_network\n  class type network-qos c-8q-nq3\n    pause pfc-cos 3\n    mtu 9216\n",
		"system qos\n  service-policy type queuing output QOS_EGRESS_PORT\n  service-policy type network-qos qos_network\n",
		"priority-flow-control watch-dog-interval on\n",
		"\ninterface Ethernet1/1\n  priority-flow-control mode on\n  priority-flow-control watch-dog-interval on\n  mtu 9216\n  service-policy type qos input QOS_CLASSIFICATION\n  no shutdown\n",
	} {
		if !strings.Contains(strings.ReplaceAll(run, "\r", ""), want) {
			t.Fatalf("running-config lacks\n%s\n---\n%s", want, run)
		}
	}
	if !strings.Contains(string(sw.RunningConfig()), "mtu 9216") {
		t.Fatal("RunningConfig does not show the change")
	}
}

func TestCheckpointRollback(t *testing.T) {
	sw, c := dial(t)
	before := string(sw.RunningConfig())
	send(t, c, "checkpoint cp1")
	send(t, c, roce...)
	if string(sw.RunningConfig()) == before {
		t.Fatal("no change")
	}
	if s := send(t, c, "show checkpoint summary"); !strings.Contains(s, "1) cp1:") {
		t.Fatalf("summary: %s", s)
	}
	out := send(t, c, "rollback running-config checkpoint cp1")
	if !strings.Contains(out, "Rollback completed successfully.") || string(sw.RunningConfig()) != before {
		t.Fatalf("rollback: %s", out)
	}
	send(t, c, "no checkpoint cp1")
	if len(sw.Checkpoints()) != 0 {
		t.Fatal("checkpoint not deleted")
	}
	if _, err := c.Send("no checkpoint cp1"); err == nil || !strings.Contains(err.Error(), "ERROR: No checkpoint with name cp1") {
		t.Fatalf("want missing-checkpoint error, got %v", err)
	}
}

func TestErrors(t *testing.T) {
	sw, c := dial(t)
	send(t, c, "configure terminal")
	for _, x := range []struct{ line, want string }{
		{"interface Ethernet9/9", "% Invalid command at '^' marker."},
		{"interface Ethernet1/1", ""},
		{"mtu 9300", "% Invalid command at '^' marker."},
		{"mtu", "% Invalid command at '^' marker."},
		{"policy-map type queuing Q", ""},
		{"class type queuing c-out-8q-q9", "% Invalid command at '^' marker."},
		{"class type queuing c-out-8q-q3", ""},
		{"random-detect minimum-threshold 150 kbytes maximum-threshold 100 kbytes drop-probability 7 weight 0 ecn", "ERROR: "},
		{"priority level 1", ""},
		{"bandwidth remaining percent 50", "ERROR: "},
		{"policy-map type qos P", ""},
		{"class NOPE", "ERROR: Class-map NOPE does not exist"},
	} {
		out, err := c.Send(x.line)
		if x.want == "" {
			if err != nil {
				t.Fatalf("%s: %v", x.line, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), x.want) {
			t.Fatalf("%s: want %q, got %v (%q)", x.line, x.want, err, out)
		}
	}
	// The caret sits under the bad token.
	out, _ := c.Send("interface Ethernet1/1")
	_ = out
	o, _ := c.Send("mtu 9300")
	if !strings.Contains(o, "^") {
		t.Fatalf("no caret: %q", o)
	}
	_ = sw
}

func TestFaultDropAfter(t *testing.T) {
	sw, c := dial(t)
	sw.Inject(sshemu.Fault{Match: regexp.MustCompile(`^checkpoint `), Kind: sshemu.DropAfter, Times: 1})
	if _, err := c.Send("checkpoint x"); err == nil {
		t.Fatal("want a dropped connection")
	}
	if cps := sw.Checkpoints(); len(cps) != 1 || cps[0] != "x" {
		t.Fatalf("DropAfter runs the command: %v", cps)
	}
}

// TestRefusesUnsourcedForms: the strict grammar refuses every form with no
// vendor source (testdata/vendor/nxos/shapes.txt NO-SOURCE rows and the
// audit's watchdog tokens) with NX-OS's parse error (session.txt).
func TestRefusesUnsourcedForms(t *testing.T) {
	_, c := dial(t)
	send(t, c, "configure terminal", "class-map type qos match-any A", "match dscp 26",
		"policy-map type qos P", "class A", "set qos-group 3",
		"policy-map type queuing Q", "class type queuing c-out-8q-q3", "bandwidth remaining percent 50",
		"policy-map type network-qos N", "class type network-qos c-8q-nq3", "pause pfc-cos 3", "mtu 9216")
	for _, x := range []struct{ mode, line string }{
		{"", "priority-flow-control watch-dog interval 100"},
		{"", "priority-flow-control watch-dog shutdown-multiplier 2"},
		{"", "priority-flow-control auto-restore multiplier 4"},
		{"", "priority-flow-control fixed-restore multiplier 4"},
		{"", "priority-flow-control watch-dog-interval off"},
		{"", "no priority-flow-control watch-dog-interval"},
		{"", "class-map type qos A"},
		{"", "no system qos"},
		{"interface Ethernet1/1", "no priority-flow-control mode"},
		{"interface Ethernet1/1", "no priority-flow-control watch-dog-interval"},
		{"interface Ethernet1/1", "priority-flow-control watch-dog-interval off"},
		{"interface Ethernet1/1", "flowcontrol receive on"},
		{"interface Ethernet1/1", "no flowcontrol send"},
		{"class-map type qos match-any A", "no match cos 3"},
		{"class-map type qos match-all B\nmatch cos 3", "match cos 4"},
		{"policy-map type qos P", "no class A"},
		{"policy-map type qos P", "class type qos A"},
		{"policy-map type qos P\nclass A", "no set qos-group"},
		{"policy-map type queuing Q", "no class type queuing c-out-8q-q3"},
		{"policy-map type queuing Q\nclass type queuing c-out-8q-q3", "no bandwidth remaining percent"},
		{"policy-map type queuing Q\nclass type queuing c-out-8q-q3", "no priority"},
		{"policy-map type queuing Q\nclass type queuing c-out-8q-q3", "no random-detect"},
		{"policy-map type queuing Q\nclass type queuing c-out-8q-q3", "random-detect minimum-threshold 150 kbytes maximum-threshold 1500 kbytes ecn"},
		{"policy-map type queuing Q\nclass type queuing c-out-8q-q3", "random-detect minimum-threshold 150 bytes maximum-threshold 1500 bytes drop-probability 7 weight 0 ecn"},
		{"policy-map type network-qos N\nclass type network-qos c-8q-nq3", "no pause pfc-cos 3"},
		{"policy-map type network-qos N\nclass type network-qos c-8q-nq3", "no mtu"},
		{"policy-map type network-qos N", "no class type network-qos c-8q-nq3"},
	} {
		send(t, c, "end", "configure terminal")
		if x.mode != "" {
			send(t, c, strings.Split(x.mode, "\n")...)
		}
		out, err := c.Send(x.line)
		if err == nil || !strings.Contains(out+err.Error(), "% Invalid command at '^' marker.") {
			t.Errorf("%q accepted (err %v, out %q)", x.line, err, out)
		}
	}
	// The documented removal forms are accepted.
	send(t, c, "end", "configure terminal", "priority-flow-control watch-dog-interval on", "no priority-flow-control watch-dog-interval on",
		"interface Ethernet1/1", "priority-flow-control mode on", "no priority-flow-control mode on",
		"priority-flow-control watch-dog-interval on", "no priority-flow-control watch-dog-interval on",
		"class-map type qos match-any A", "match dscp 24-31", "no match dscp 24-25", "end")
}

// TestStartupSaveReload: copy running-config startup-config saves (save.txt),
// show startup-config prints it with NX-OS's header (show-startup-config.txt),
// Reload boots it and drops checkpoints, FailSave makes the save print the
// given text and not save.
func TestStartupSaveReload(t *testing.T) {
	sw, c := dial(t)
	send(t, c, "configure terminal", "interface Ethernet1/1", "mtu 9216", "end", "checkpoint cp1")
	if strings.Contains(string(sw.StartupConfig()), "mtu 9216") {
		t.Fatal("startup changed before a save")
	}
	sw.FailSave("Configuration update aborted: timed out")
	if out := send(t, c, "copy running-config startup-config"); !strings.Contains(out, "Configuration update aborted: timed out") || strings.Contains(out, "Copy complete") {
		t.Fatalf("failed save output: %q", out)
	}
	if strings.Contains(string(sw.StartupConfig()), "mtu 9216") {
		t.Fatal("a failed save saved")
	}
	sw.FailSave("")
	if out := send(t, c, "copy running-config startup-config"); !strings.Contains(out, "Copy complete.") {
		t.Fatalf("save output: %q", out)
	}
	st := strings.ReplaceAll(send(t, c, "show startup-config"), "\r", "")
	if !strings.HasPrefix(st, "!Command: show startup-config\n!Time: ") || !strings.Contains(st, "\n!Startup config saved at: ") || !strings.Contains(st, "mtu 9216") {
		t.Fatalf("show startup-config:\n%s", st)
	}
	send(t, c, "configure terminal", "interface Ethernet1/2", "mtu 9000", "end")
	sw.Reload()
	run := string(sw.RunningConfig())
	if !strings.Contains(run, "mtu 9216") || strings.Contains(run, "mtu 9000") || len(sw.Checkpoints()) != 0 {
		t.Fatalf("after reload: checkpoints %v\n%s", sw.Checkpoints(), run)
	}
}
