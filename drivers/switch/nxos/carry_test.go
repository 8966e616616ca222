package nxos

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// TestCarryUnmanagedQueue: Microsoft's Azure Local configuration
// (azure-local-tor-qos.cfg) under an intent without traffic class 7 (the
// spec leaves tc/7 unmanaged): the read records queue 7's running lines
// as facts, and a step that rewrites the queuing policy (one class
// changed) copies them verbatim into FABCTL-QUEUING and FABCTL-NQOS
// instead of `bandwidth remaining percent 0`; a queue the diff names (a
// class the spec dropped) is not carried; an unmanaged queue that is
// no-drop, or runs a line of a form no vendor text shows, refuses the
// step with the reason (carry.go).
func TestCarryUnmanagedQueue(t *testing.T) {
	azure := corpusBody(t, "azure-local-tor-qos.cfg")
	sw := &intent.Switch{Trust: "pcp", TCs: []intent.TC{{TC: 0, Bandwidth: 48}, {TC: 3, Lossless: true, Bandwidth: 60}},
		Ports: []intent.Port{{Name: "Ethernet1/17", Trust: "pcp", MTU: 9216, MTUFloor: true, PFC: []int{3}}}}
	oneClass := []intent.AttrChange{{Path: "tc/3/bandwidth", Action: intent.Update, Before: "50", After: "60"}}
	steps := func(t *testing.T, text string, diff []intent.AttrChange) (string, error) {
		t.Helper()
		live, err := ReadRunningConfig(text, sw)
		if err != nil {
			t.Fatal(err)
		}
		out, err := changes(sw, diff, sw.Flatten(), live)
		if err != nil {
			return "", err
		}
		var lines []string
		for _, c := range out {
			lines = append(lines, c.Payload...)
		}
		return strings.Join(lines, "\n") + "\n", nil
	}

	live, err := ReadRunningConfig(azure, sw)
	if err != nil {
		t.Fatal(err)
	}
	if got := live[FactCarryQueuing+"7"]; got != "bandwidth percent 1" {
		t.Errorf("%s7 = %q", FactCarryQueuing, got)
	}
	if got := live[FactCarryNetwork+"7"]; got != "mtu 9216" {
		t.Errorf("%s7 = %q", FactCarryNetwork, got)
	}
	for _, q := range []string{"0", "1", "3", "6"} {
		// Managed (0, 3) or unused (`bandwidth remaining percent 0`).
		if v, ok := live[FactCarryQueuing+q]; ok {
			t.Errorf("%s%s = %q, want none", FactCarryQueuing, q, v)
		}
	}

	got, err := steps(t, azure, oneClass)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"policy-map type queuing " + QueuingPolicy + "\n",
		"  class type queuing c-out-8q-q3\n    bandwidth remaining percent 60\n",
		"  class type queuing c-out-8q-q7\n    bandwidth percent 1\n",
		"  class type queuing c-out-8q-q6\n    bandwidth remaining percent 0\n",
		"  class type network-qos c-8q-nq7\n    mtu 9216\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the step lacks %q:\n%s", want, got)
		}
	}

	// The spec dropped class 7 (the diff names it): not carried.
	dropped := append([]intent.AttrChange{{Path: "tc/7/sched", Action: intent.Delete, Before: live["tc/7/sched"]}}, oneClass...)
	if got, err = steps(t, azure, dropped); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "  class type queuing c-out-8q-q7\n    bandwidth remaining percent 0\n") || strings.Contains(got, "bandwidth percent 1") || strings.Contains(got, "c-8q-nq7") {
		t.Errorf("a dropped class 7 is carried:\n%s", got)
	}

	for _, c := range []struct{ name, text, why string }{
		{"no-drop", strings.Replace(azure, "  class type network-qos c-8q-nq7\n    mtu 9216\n", "  class type network-qos c-8q-nq7\n    mtu 9216\n    pause pfc-cos 7\n", 1),
			`queue 7 is no-drop on the switch (c-8q-nq7: "pause pfc-cos 7")`},
		{"unsourced line", strings.Replace(azure, "    bandwidth percent 1\n", "    bandwidth percent 1\n    shape min 10 gbps max 20 gbps\n", 1),
			`queue 7 (c-out-8q-q7) runs "shape min 10 gbps max 20 gbps", a line fabctl does not copy`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := steps(t, c.text, oneClass)
			if err == nil || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "cannot carry over as they run") {
				t.Errorf("error %v, want one saying %q", err, c.why)
			}
		})
	}
	// Without a change to the classes no queuing step is written, and
	// nothing is refused.
	if _, err := steps(t, strings.Replace(azure, "    bandwidth percent 1\n", "    bandwidth percent 1\n    shape min 10 gbps max 20 gbps\n", 1),
		[]intent.AttrChange{{Path: "port/Ethernet1/17/mtu", Action: intent.Update, Before: "1500", After: "9216"}}); err != nil {
		t.Errorf("a port step: %v", err)
	}
}
