package clicore

import (
	"errors"
	"strings"
	"testing"

	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

func TestScript(t *testing.T) {
	text := "! comment\nqos profile P\n   tx-queue 3\n      bandwidth 50\n\tno shutdown\ninterface Ethernet1\nend\n"
	nodes := ParseIndented(text)
	if len(nodes) != 2 || nodes[0].Line != "qos profile P" || len(nodes[0].Children) != 2 {
		t.Fatalf("tree: %+v", nodes)
	}
	got := strings.Join(Script(strings.Split(text, "\n")), "|")
	want := "qos profile P|tx-queue 3|bandwidth 50|exit|no shutdown|exit|interface Ethernet1"
	if got != want {
		t.Fatalf("script %q, want %q", got, want)
	}
}

func TestStepError(t *testing.T) {
	lost := &sshtransport.Error{Device: "leaf1", Op: "commit", Kind: sshtransport.KindClosed}
	e := &StepError{Device: "leaf1", Step: "commit", Err: lost}
	if e.Error() != "leaf1: commit: connection lost: the connection dropped before the switch answered" || !IsConnLoss(e) {
		t.Fatalf("%v %v", e, IsConnLoss(e))
	}
	other := &StepError{Device: "leaf1", Step: "line 3 of 9", Err: errors.New("boom")}
	if other.Error() != "leaf1: line 3 of 9: boom" || IsConnLoss(other) {
		t.Fatalf("%v", other)
	}
}

func TestGroupDiff(t *testing.T) {
	diff := []intent.AttrChange{{Path: "port/Ethernet1/1/mtu"}, {Path: "dscp/26"}, {Path: "config/saved"}, {Path: "port/Ethernet1/1/pfc"}}
	fields := []intent.Field{{Pattern: "port/*/pfc", Disruptive: "flap"}}
	key := func(p string) string {
		if p == "config/saved" {
			return ""
		}
		if strings.HasPrefix(p, "port/") {
			name, _ := SplitPort(p)
			return "interface " + name
		}
		return "classification"
	}
	rank := func(k string) int {
		if k == "classification" {
			return 0
		}
		return 1
	}
	g := GroupDiff(diff, fields, key, rank)
	if len(g) != 2 || g[0].Key != "classification" || g[1].Key != "interface Ethernet1/1" || len(g[1].Paths) != 2 || g[1].Disruptive != "flap" {
		t.Fatalf("%+v %+v", g[0], g[1])
	}
}
