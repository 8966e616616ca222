package nxos

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// TestRebuildDetachesOnlyItsOwnPolicy: a change that rebuilds the queuing
// policy (a class loses its ECN) or the network-qos policy (a no-drop
// class goes) on a switch that runs the vendor's policies (Azure Local's
// QOS_EGRESS_PORT and its network-qos) sends no `no service-policy` for
// fabctl's policy, which system qos does not run (NX-OS refuses to detach
// a policy that is not attached) and no `no policy-map` for one the switch
// does not have; where the switch has fabctl's policy but runs another,
// only the policy is removed.
func TestRebuildDetachesOnlyItsOwnPolicy(t *testing.T) {
	azure := corpusBody(t, "azure-local-tor-qos.cfg")
	sw := &intent.Switch{Trust: "pcp", TCs: []intent.TC{{TC: 0, Bandwidth: 50}, {TC: 3, Bandwidth: 50}},
		Ports: []intent.Port{{Name: "Ethernet1/17", Trust: "pcp", MTU: 9216, MTUFloor: true}}}
	steps := func(t *testing.T, text string) string {
		t.Helper()
		live, err := ReadRunningConfig(text, sw)
		if err != nil {
			t.Fatal(err)
		}
		var diff []intent.AttrChange
		for _, p := range []string{"tc/3/ecn/min", "tc/3/lossless"} {
			if live[p] == "" {
				t.Fatalf("the Azure switch reads no %s: %v", p, live)
			}
		}
		diff = append(diff, intent.AttrChange{Path: "tc/3/ecn/min", Action: intent.Delete, Before: live["tc/3/ecn/min"]},
			intent.AttrChange{Path: "tc/3/lossless", Action: intent.Update, Before: live["tc/3/lossless"], After: "false"})
		out, err := changes(sw, diff, sw.Flatten(), live)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, c := range out {
			lines = append(lines, c.Payload...)
		}
		return strings.Join(lines, "\n") + "\n"
	}
	got := steps(t, azure)
	for _, bad := range []string{"no service-policy type queuing output " + QueuingPolicy, "no policy-map type queuing " + QueuingPolicy,
		"no service-policy type network-qos " + NetworkPolicy, "no policy-map type network-qos " + NetworkPolicy} {
		if strings.Contains(got, bad) {
			t.Errorf("the steps send %q on a switch without fabctl's policy:\n%s", bad, got)
		}
	}
	for _, want := range []string{"policy-map type queuing " + QueuingPolicy, "service-policy type queuing output " + QueuingPolicy} {
		if !strings.Contains(got, want) {
			t.Errorf("the steps lack %q:\n%s", want, got)
		}
	}

	// fabctl's queuing policy is on the switch but system qos runs the
	// vendor's: removed, not detached.
	present := azure + "policy-map type queuing " + QueuingPolicy + "\n  class type queuing c-out-8q-q3\n    bandwidth remaining percent 50\n"
	got = steps(t, present)
	if strings.Contains(got, "no service-policy type queuing output "+QueuingPolicy) || !strings.Contains(got, "no policy-map type queuing "+QueuingPolicy) {
		t.Errorf("a present, detached %s: want it removed and not detached:\n%s", QueuingPolicy, got)
	}
}
