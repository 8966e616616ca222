package eosemu

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

const pw = "emu-Pa55"

// dial connects with scrapligo's built-in arista_eos platform.
func dial(t *testing.T) (*Switch, *sshtransport.Conn) { t.Helper(); return dialModel(t, "") }

// dialModel is dial to an emulator of that model.
func dialModel(t *testing.T, model string) (*Switch, *sshtransport.Conn) {
	t.Helper()
	sw, err := Start(Options{Password: pw, Ports: 4, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	kh := filepath.Join(t.TempDir(), "known_hosts")
	if err := sw.WriteKnownHosts(kh); err != nil {
		t.Fatal(err)
	}
	tg := drivers.Target{Device: intent.Device{Kind: intent.KindSwitch, Name: "leaf", Platform: "eos", Address: sw.Addr()},
		Credentials: &spec.Credentials{Name: "lab", Username: "admin", Password: &spec.SecretRef{Kind: "env", Name: "PW"}, KnownHosts: kh}}
	c, err := sshtransport.Dial(context.Background(), tg, sshtransport.Options{Platform: "arista_eos", ConnectTimeout: 3 * time.Second,
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

func TestSessionCommitAndShow(t *testing.T) {
	sw, c := dial(t)
	before := string(sw.RunningConfig())
	send(t, c, "configure session fabctl-0123abcd",
		"qos map dscp 26 to traffic-class 3", "qos map dscp 8 9 to traffic-class 0", "qos map dscp 10 to traffic-class 3",
		"qos profile ROCE", "qos trust dscp", "tx-queue 3", "bandwidth percent 50", "no priority",
		"random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100",
		// implicit exit from tx-queue to the profile, then to config
		"priority-flow-control on", "priority-flow-control priority 3 no-drop", "priority-flow-control pause watchdog",
		"interface Ethernet1", "mtu 9214", "service-profile ROCE", "exit",
		"priority-flow-control pause watchdog default timeout 0.2",
		"priority-flow-control pause watchdog default recovery-time 0.4",
		"priority-flow-control pause watchdog default polling-interval 0.1")
	if string(sw.RunningConfig()) != before {
		t.Fatal("session changed the running-config before commit")
	}
	diffs := send(t, c, "show session-config diffs")
	if !strings.Contains(diffs, "+qos map dscp 10 26 to traffic-class 3") || !strings.Contains(diffs, "+   mtu 9214") {
		t.Fatalf("diffs:\n%s", diffs)
	}
	send(t, c, "commit")
	run := send(t, c, "show running-config")
	for _, want := range []string{
		"qos map dscp 8 9 to traffic-class 0\nqos map dscp 10 26 to traffic-class 3\n",
		"qos profile ROCE\n   qos trust dscp\n   !\n   tx-queue 3\n      no priority\n      bandwidth percent 50\n      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes max-mark-probability 100\n   !\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n   priority-flow-control pause watchdog\n!\n",
		"interface Ethernet1\n   mtu 9214\n   service-profile ROCE\n!\n",
		"priority-flow-control pause watchdog default timeout 0.2\npriority-flow-control pause watchdog default recovery-time 0.4\npriority-flow-control pause watchdog default polling-interval 0.1\n",
	} {
		if !strings.Contains(strings.ReplaceAll(run, "\r", ""), want) {
			t.Fatalf("running-config lacks\n%s\ngot:\n%s", want, run)
		}
	}
	if len(sw.Sessions()) != 0 {
		t.Fatal("session left pending")
	}
}

func TestInvalidInputAndAbort(t *testing.T) {
	sw, c := dial(t)
	before := string(sw.RunningConfig())
	send(t, c, "configure session s1", "interface Ethernet2", "mtu 9000")
	_, err := c.Send("mtu 99999")
	var e *sshtransport.Error
	if !errors.As(err, &e) || e.Kind != sshtransport.KindCommand || !strings.Contains(e.Detail, "% Invalid input detected at '^' marker.") {
		t.Fatalf("want invalid input, got %v", err)
	}
	_, err = c.Send("frobnicate")
	if err == nil {
		t.Fatal("unknown command accepted")
	}
	_, err = c.Send("tx-queue")
	if err == nil || !strings.Contains(err.Error(), "% Incomplete command") && !strings.Contains(err.Error(), "Invalid input") {
		t.Fatalf("want error, got %v", err)
	}
	send(t, c, "abort")
	if string(sw.RunningConfig()) != before || len(sw.Sessions()) != 0 {
		t.Fatal("abort left changes")
	}
}

// TestLongPrompt: the qos-profile tx-queue prompt of a named session is
// long (scrapli/scrapli_cfg#51); the arista_eos platform still matches it.
func TestLongPrompt(t *testing.T) {
	_, c := dial(t)
	send(t, c, "configure session fabctl-0123abcd-rb", "qos profile FABCTL-LOSSLESS", "tx-queue 6", "priority strict", "end")
	sh := &shell{sw: &Switch{opts: Options{Hostname: "leaf"}}, enabled: true, config: true, session: "fabctl-0123abcd-rb",
		stack: []frame{{kind: "config"}, {kind: "qos-profile", name: "FABCTL"}, {kind: "txq", name: "FABCTL", q: 3}}}
	if p := sh.Prompt(); p != "leaf(config-s-fabctl-0123abcd-rb-qos-profile-FABCTL-txq-3)#" {
		t.Fatal(p)
	}
}

func TestCommitTimerRevertsAndConfirms(t *testing.T) {
	sw, c := dial(t)
	before := string(sw.RunningConfig())
	send(t, c, "configure session t1", "interface Ethernet3", "mtu 9000", "end", "configure session t1 commit timer 00:00:01")
	if !strings.Contains(string(sw.RunningConfig()), "   mtu 9000") {
		t.Fatal("commit timer did not apply")
	}
	time.Sleep(1500 * time.Millisecond)
	if string(sw.RunningConfig()) != before || sw.Reverts() != 1 {
		t.Fatal("commit timer did not revert")
	}
	send(t, c, "configure session t2", "interface Ethernet3", "mtu 9000", "end", "configure session t2 commit timer 00:00:01", "configure session t2 commit")
	time.Sleep(1500 * time.Millisecond)
	if !strings.Contains(string(sw.RunningConfig()), "   mtu 9000") {
		t.Fatal("confirmed commit reverted")
	}
	// NAPALM's rollback of a pending commit-timer session: abort reverts it.
	send(t, c, "configure session t3", "interface Ethernet3", "mtu 9100", "end", "configure session t3 commit timer 00:01:00")
	if !strings.Contains(string(sw.RunningConfig()), "   mtu 9100") {
		t.Fatal("commit timer did not apply")
	}
	send(t, c, "configure session t3 abort")
	if r := string(sw.RunningConfig()); !strings.Contains(r, "   mtu 9000") || strings.Contains(r, "mtu 9100") {
		t.Fatal("confirmed commit reverted")
	}
}

func TestExecModeNeedsEnable(t *testing.T) {
	sh := &shell{sw: &Switch{opts: Options{Hostname: "leaf"}, running: NewConfig("leaf", 2), sessions: map[string]*Config{}}}
	if sh.Prompt() != "leaf>" {
		t.Fatal(sh.Prompt())
	}
	out, _ := sh.Handle("configure terminal")
	if !strings.Contains(out, "% Invalid input") {
		t.Fatal(out)
	}
	sh.Handle("enable")
	sh.Handle("configure terminal")
	if sh.Prompt() != "leaf(config)#" {
		t.Fatal(sh.Prompt())
	}
	sh.Handle("interface Et1")
	if sh.Prompt() != "leaf(config-if-Et1)#" {
		t.Fatal(sh.Prompt())
	}
	sh.Handle("mtu 9100")
	sh.Handle("end")
	if !strings.Contains(sh.sw.running.Render(), "interface Ethernet1\n   mtu 9100\n") {
		t.Fatal("configure terminal did not edit the running-config")
	}
}

// TestRefusesUndocumentedForms: forms with no vendor source, or against
// one, are refused with EOS's invalid-input error (shapes.txt rows
// CONTRADICTED / NO-SOURCE).
func TestRefusesUndocumentedForms(t *testing.T) {
	sw, c := dial(t)
	send(t, c, "configure session s1")
	for _, l := range []string{
		"priority-flow-control pause watchdog default timeout 0.2 recovery-time 0.4 polling-interval 0.1",
		"priority-flow-control pause watchdog default timeout 0.123",
		"hostname other x", "no interface Ethernet1",
		// The removal forms no vendor source shows (pyeapi's generic rule only).
		"no qos profile P2", "default qos profile P2", "no priority-flow-control pause watchdog default timeout",
		"no priority-flow-control pause watchdog override action drop", "no priority-flow-control pause watchdog action",
		"no qos map dscp 8 to traffic-class 1",
		"qos profile P", "no priority-flow-control on", "no priority-flow-control priority 3 no-drop", "no tx-queue 3",
		"no priority-flow-control pause watchdog",
		"tx-queue 3", "no random-detect ecn", "commit timer 00:00:10",
	} {
		if l == "qos profile P" || l == "tx-queue 3" {
			send(t, c, l)
			continue
		}
		_, err := c.Send(l)
		if err == nil || !strings.Contains(err.Error(), "% Invalid input detected at '^' marker.") {
			t.Errorf("%q: want invalid input, got %v", l, err)
		}
	}
	send(t, c, "abort")
	for _, l := range []string{"configure", "no configure session s1", "show configuration sessions", "show running-config all detail", "copy running-config flash:x"} {
		if _, err := c.Send(l); err == nil || !strings.Contains(err.Error(), "% Invalid input detected") {
			t.Errorf("%q: want invalid input, got %v", l, err)
		}
	}
	if len(sw.Sessions()) != 0 {
		t.Fatal(sw.Sessions())
	}
}

// TestSaveStartupReload: the save commands copy running to startup,
// `show startup-config` prints it, Reload brings it back, FailSave fails.
func TestSaveStartupReload(t *testing.T) {
	sw, c := dial(t)
	factory := string(sw.RunningConfig())
	if !strings.HasPrefix(string(sw.StartupConfig()), "! Command: show startup-config\n! Startup-config last modified at ") {
		t.Fatal(string(sw.StartupConfig()))
	}
	send(t, c, "configure session a", "interface Ethernet1", "mtu 9000", "commit")
	sw.Reload()
	if string(sw.RunningConfig()) != factory {
		t.Fatal("reload kept an unsaved change")
	}
	send(t, c, "configure session b", "interface Ethernet1", "mtu 9000", "commit", "copy running-config startup-config")
	start := send(t, c, "show startup-config")
	if !strings.Contains(start, "   mtu 9000") {
		t.Fatal(start)
	}
	send(t, c, "configure session b2", "interface Ethernet2", "mtu 9000", "end", "configure session b2 commit timer 00:01:00")
	sw.Reload()
	if r := string(sw.RunningConfig()); !strings.Contains(r, "interface Ethernet1\n   mtu 9000") || strings.Contains(r, "interface Ethernet2\n   mtu") || len(sw.Sessions()) != 0 {
		t.Fatal("reload did not restore startup:\n" + r)
	}
	const why = "% Error copying system:/running-config to flash:/startup-config (No space left on device)"
	sw.FailSave(why)
	send(t, c, "configure session d", "interface Ethernet3", "mtu 9000", "commit")
	if _, err := c.Send("write memory"); err == nil || !strings.Contains(err.Error(), "No space left on device") {
		t.Fatalf("failed save: %v", err)
	}
	if strings.Contains(string(sw.StartupConfig()), "interface Ethernet3\n   mtu") {
		t.Fatal("a failed save changed startup")
	}
	sw.FailSave("")
	send(t, c, "write memory")
	if !strings.Contains(string(sw.StartupConfig()), "interface Ethernet3\n   mtu 9000") {
		t.Fatal("write memory did not save")
	}
}

// ExtraPorts: the switch has interfaces the numbered list does not name
// (a split port's lane), listed in the running-config and configurable.
func TestExtraPorts(t *testing.T) {
	sw, err := Start(Options{Password: pw, Ports: 2, ExtraPorts: []string{"Ethernet3/1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sw.Close() })
	run := string(sw.RunningConfig())
	for _, want := range []string{"interface Ethernet1\n", "interface Ethernet2\n", "interface Ethernet3/1\n"} {
		if !strings.Contains(run, want) {
			t.Errorf("running-config lacks %q:\n%s", want, run)
		}
	}
	if strings.Contains(run, "interface Ethernet3\n") {
		t.Errorf("Ethernet3 exists:\n%s", run)
	}
}

// TestQueueKeywordByFamily: a Sand switch takes tx-queue and refuses
// uc-tx-queue, a Strata switch (and vEOS) the other way round, with EOS's
// invalid-input refusal at the keyword; `show version` names the model on
// its first line (goeapi-show-version.txt); an unsourced model is refused
// at Start.
func TestQueueKeywordByFamily(t *testing.T) {
	for _, c := range []struct{ model, ok, bad string }{
		{"", "tx-queue", "uc-tx-queue"},
		{"DCS-7800R3-48CQ2", "tx-queue", "uc-tx-queue"},
		{"DCS-7060X6-64PE-F", "uc-tx-queue", "tx-queue"},
		{"vEOS", "uc-tx-queue", "tx-queue"},
	} {
		sw, conn := dialModel(t, c.model)
		model := c.model
		if model == "" {
			model = DefaultModel
		}
		if v := send(t, conn, "show version"); !strings.HasPrefix(strings.TrimLeft(v, "\r\n"), "Arista "+model+"\n") {
			t.Fatalf("%s: show version: %q", model, v)
		}
		send(t, conn, "configure session s1", "qos profile P", c.ok+" 3", "no priority", "bandwidth percent 40")
		if _, err := conn.Send(c.bad + " 4"); err == nil || !strings.Contains(err.Error(), "Invalid input") {
			t.Fatalf("%s: %s accepted (%v)", model, c.bad, err)
		}
		send(t, conn, "commit")
		run := string(sw.RunningConfig())
		if !strings.Contains(run, "   "+c.ok+" 3\n      no priority\n      bandwidth percent 40\n") || strings.Contains(run, " "+c.bad+" ") {
			t.Fatalf("%s: running-config:\n%s", model, run)
		}
	}
	if _, err := Start(Options{Password: pw, Model: "DCS-9999X-1"}); err == nil {
		t.Fatal("a model no source places started")
	}
}

// TestHiddenDSCPDefaults: an entry equal to the platform's built-in map
// is not printed by show running-config, show running-config all prints
// the whole map, setting a code point to its built-in class returns it to
// the default (the derived negation is refused);
// vEOS's built-in map is the one pyeapi's capture prints (traffic-class 9).
func TestHiddenDSCPDefaults(t *testing.T) {
	def := map[int]int{}
	for d := 0; d < 64; d++ {
		def[d] = d / 8
	}
	sw, err := Start(Options{Password: pw, Ports: 2, DSCPDefault: def})
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	cfg := sw.running
	for _, l := range []string{"qos map dscp 0 1 to traffic-class 0", "qos map dscp 8 9 to traffic-class 3"} {
		if _, _, ok := apply(cfg, frame{kind: "config"}, strings.Fields(l)); !ok {
			t.Fatal(l)
		}
	}
	run, all := string(sw.RunningConfig()), sw.running.RenderAll()
	if strings.Contains(run, "traffic-class 0\n") || !strings.Contains(run, "qos map dscp 8 9 to traffic-class 3\n") {
		t.Fatalf("running-config:\n%s", run)
	}
	if !strings.Contains(all, "! Command: show running-config all\n") || !strings.Contains(all, "qos map dscp 0 1 2 3 4 5 6 7 to traffic-class 0\n") ||
		!strings.Contains(all, "qos map dscp 8 9 24 25 26 27 28 29 30 31 to traffic-class 3\n") || !strings.Contains(all, "   mtu 1500\n") {
		t.Fatalf("running-config all:\n%s", all)
	}
	if _, _, ok := apply(cfg, frame{kind: "config"}, strings.Fields("no qos map dscp 8 9 to traffic-class 3")); ok {
		t.Fatal("the derived negation was taken")
	}
	if _, _, ok := apply(cfg, frame{kind: "config"}, strings.Fields("qos map dscp 8 9 to traffic-class 1")); !ok {
		t.Fatal("set to the built-in class refused")
	}
	if run := string(sw.RunningConfig()); strings.Contains(run, "qos map dscp") {
		t.Fatalf("the built-in class set again is still printed:\n%s", run)
	}
	v, err := Start(Options{Password: pw, Ports: 1, Model: "vEOS"})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if all := v.running.RenderAll(); !strings.Contains(all, "qos map dscp 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 to traffic-class 9\n") {
		t.Fatalf("vEOS built-in map:\n%s", all)
	}
}

// TestCleanConfigReplace: `rollback clean-config` in a session empties its
// candidate and the recorded running-config typed after it replaces the
// running-config on commit (NAPALM's replace, napalm-config-session.txt:9-11);
// the removal forms no source shows are refused, outside a session too.
func TestCleanConfigReplace(t *testing.T) {
	sw, c := dial(t)
	pre := string(sw.RunningConfig())
	send(t, c, "configure session s1", "qos profile P", "priority-flow-control on", "priority-flow-control pause watchdog", "exit",
		"priority-flow-control pause watchdog default timeout 0.2", "interface Ethernet1", "mtu 9000", "service-profile P", "exit", "commit")
	if string(sw.RunningConfig()) == pre {
		t.Fatal("nothing committed")
	}
	send(t, c, "configure session s2", "interface Ethernet1")
	if _, err := c.Send("no service-profile"); err == nil || !strings.Contains(err.Error(), "% Invalid input detected") {
		t.Fatalf("no service-profile: want invalid input, got %v", err)
	}
	send(t, c, "exit")
	if _, err := c.Send("interface Ethernet1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Send("rollback clean-config"); err == nil {
		t.Fatal("rollback clean-config taken inside a sub-mode")
	}
	send(t, c, "exit", "rollback clean-config")
	for _, n := range parseLines(pre) {
		send(t, c, n)
	}
	send(t, c, "commit")
	if got := string(sw.RunningConfig()); got != pre {
		t.Fatalf("replace did not restore the recorded configuration:\n%s\n---\n%s", got, pre)
	}
	if _, err := c.Send("rollback clean-config"); err == nil {
		t.Fatal("rollback clean-config taken outside a session")
	}
}

// parseLines types a running-config the way a replace does: no `!`
// comments, no `end`, `exit` after each mode's lines.
func parseLines(cfg string) []string {
	var out []string
	depth := 0
	for _, l := range strings.Split(cfg, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "!") || t == "end" {
			continue
		}
		d := (len(l) - len(strings.TrimLeft(l, " "))) / 3
		for ; depth > d; depth-- {
			out = append(out, "exit")
		}
		out = append(out, t)
		if strings.HasPrefix(t, "interface ") || strings.HasPrefix(t, "qos profile ") {
			depth = d + 1
		}
	}
	for ; depth > 0; depth-- {
		out = append(out, "exit")
	}
	return out
}

// TestPortQoSLines: an interface and a qos profile take AVD's port
// classification lines (avd-qos-trust.txt): `qos trust dscp|cos`, `no qos
// trust` (trust disabled, a state the running-config prints), `qos cos
// N`, `qos dscp N`, printed in AVD's order after service-profile and
// before the tx-queues; `default qos trust` and `no qos dscp` remove
// their lines; a CoS above 7 or a DSCP above 63 is refused.
func TestPortQoSLines(t *testing.T) {
	sw, c := dial(t)
	send(t, c, "configure session s1",
		"qos profile no_qos_trust", "no qos trust", "qos dscp 4", "qos cos 3",
		"interface Ethernet1", "service-profile no_qos_trust", "qos dscp 48", "qos trust dscp",
		"interface Ethernet2", "qos trust cos", "qos cos 2", "qos dscp 46", "no qos dscp", "default qos trust", "commit")
	run := strings.ReplaceAll(string(sw.RunningConfig()), "\r", "")
	for _, want := range []string{
		"qos profile no_qos_trust\n   no qos trust\n   qos cos 3\n   qos dscp 4\n!\n",
		"interface Ethernet1\n   service-profile no_qos_trust\n   qos trust dscp\n   qos dscp 48\n!\n",
		"interface Ethernet2\n   qos cos 2\n!\n",
	} {
		if !strings.Contains(run, want) {
			t.Fatalf("running-config lacks\n%s\ngot:\n%s", want, run)
		}
	}
	send(t, c, "configure session s2", "interface Ethernet3")
	for _, l := range []string{"qos cos 8", "qos dscp 64", "qos trust ip", "qos dscp"} {
		if out, err := c.Send(l); err == nil && !strings.Contains(out, "%") {
			t.Errorf("%q accepted: %q", l, out)
		}
	}
}
