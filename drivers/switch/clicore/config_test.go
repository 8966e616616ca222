package clicore

import (
	"errors"
	"strings"
	"testing"

	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
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
