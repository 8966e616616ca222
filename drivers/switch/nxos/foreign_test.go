package nxos

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/testbed/nxosemu"
)

// TestForeignInputPolicyRead: a port bound to an input qos policy that
// is not fabctl's reads as the trust its classes make (foreign.go,
// cisco-qos-guide-classification.txt), compared with what fabctl's own
// policy would classify: Microsoft's AZLocal_SERVICES (CoS 3 -> 3, CoS 7
// -> 7, the rest qos-group 0) is trust pcp for an intent with traffic
// classes 3 and 7, and shows CoS 7 for one without class 7 (the switch,
// whose only managed port classifies by CoS, trusts pcp); a policy
// fabctl cannot read as one trust reads "other (...)"; the binding is a
// fact for the steps.
func TestForeignInputPolicyRead(t *testing.T) {
	azure := corpusBody(t, "azure-local-tor-qos.cfg")
	port := []intent.Port{{Name: "Ethernet1/17", Trust: "pcp"}}
	with7 := &intent.Switch{Trust: "dscp", TCs: []intent.TC{{TC: 0}, {TC: 3, Lossless: true}, {TC: 7}}, Ports: port}
	no7 := &intent.Switch{Trust: "dscp", TCs: []intent.TC{{TC: 0}, {TC: 3, Lossless: true}}, Ports: port}
	dscpSw := &intent.Switch{Trust: "dscp", TCs: []intent.TC{{TC: 0}, {TC: 3}}, Ports: []intent.Port{{Name: "Ethernet1/17", Trust: "dscp"}}}
	dscpSw.DSCPToTC[26] = 3
	for _, c := range []struct {
		name, text string
		sw         *intent.Switch
		want       string // the port's trust ("" when it is the switch's)
	}{
		{"azure, classes 0 3 7", azure, with7, ""},
		{"azure, classes 0 3", azure, no7, "pcp (AZLocal_SERVICES: cos 7 -> qos-group 7)"},
		{"class-default elsewhere", strings.Replace(azure, "  class CLUSTER\n    set qos-group 7\n", "  class CLUSTER\n    set qos-group 7\n  class class-default\n    set qos-group 3\n", 1), with7,
			"pcp (AZLocal_SERVICES: cos 0 -> qos-group 3, cos 1 -> qos-group 3, cos 2 -> qos-group 3, cos 4 -> qos-group 3, cos 5 -> qos-group 3, cos 6 -> qos-group 3)"},
		{"first match wins", strings.Replace(azure, "  match cos 7\n", "  match cos 3\n", 1), with7, "pcp (AZLocal_SERVICES: cos 7 -> qos-group 0)"},
		{"marking", strings.Replace(azure, "    set qos-group 7\n", "    set qos-group 7\n    set dscp 46\n", 1), with7,
			"other (AZLocal_SERVICES: class CLUSTER does more than set a qos-group (set dscp 46))"},
		{"cos and dscp", strings.Replace(azure, "  match cos 7\n", "  match dscp 48\n", 1), with7, "other (AZLocal_SERVICES: it matches on both dscp and cos)"},
		{"match-all of two", strings.Replace(azure, "  match cos 7\n", "  match cos 7\n  match dscp 48\n", 1), with7,
			"other (AZLocal_SERVICES: class-map type qos match-all CLUSTER has several match statements)"},
		{"other match", strings.Replace(azure, "  match cos 7\n", "  match precedence 7\n", 1), with7, `other (AZLocal_SERVICES: class-map CLUSTER has "match precedence 7")`},
		{"dscp policy", strings.NewReplacer("  match cos 3\n", "  match dscp 26\n", "  class CLUSTER\n    set qos-group 7\n", "").Replace(azure), dscpSw, "dscp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := ReadRunningConfig(c.text, c.sw)
			if err != nil {
				t.Fatal(err)
			}
			if got := st["port/Ethernet1/17/trust"]; got != c.want {
				t.Errorf("trust %q, want %q", got, c.want)
			}
			// Without FABCTL-QOS, a switch whose managed ports all
			// classify by CoS trusts pcp.
			if got, pcp := st["trust"], strings.HasPrefix(c.want, "pcp") || c.want == ""; got != map[bool]string{true: "pcp"}[pcp] {
				t.Errorf("switch trust %q", got)
			}
			if got := st[FactQoSInput]; got != "Ethernet1/17=AZLocal_SERVICES" {
				t.Errorf("%s = %q", FactQoSInput, got)
			}
		})
	}
}

// TestForeignInputPolicyRebound: on the emulator, a port moved by hand
// to a policy of its own with fabctl's classification plans nothing; a
// step that writes the interface binds fabctl's policy instead, written
// first even when the switch lacks it; a classification that differs
// is planned on the port's trust and the step swaps the binding (the
// other policy stays on the switch, untouched).
func TestForeignInputPolicyRebound(t *testing.T) {
	sw, emu, plan, apply := mixedLeaf(t)
	_, _, steps := plan()
	apply(steps)

	// By hand: AZ_SERVICES classifies as FABCTL-QOS-COS does (match-all
	// class-maps, no class-default), bound instead; fabctl's policy goes.
	emu.Edit(func(c *nxosemu.Config) {
		az := &nxosemu.Policy{}
		for _, cl := range c.Policies["qos"][CoSPolicy].Classes {
			if cl.Name == classDefault {
				continue
			}
			cm := *c.ClassMaps[cl.Name]
			cm.MatchAll = true
			c.ClassMaps["AZ_"+cl.Name] = &cm
			x := *cl
			x.Name = "AZ_" + cl.Name
			az.Classes = append(az.Classes, &x)
		}
		c.Policies["qos"]["AZ_SERVICES"] = az
		c.Interfaces["Ethernet1/4"].QoSInput = "AZ_SERVICES"
		delete(c.Policies["qos"], CoSPolicy)
		for n := range c.ClassMaps {
			if strings.HasPrefix(n, CoSClassPrefix) {
				delete(c.ClassMaps, n)
			}
		}
	})
	live, diff, _ := plan()
	if len(diff) != 0 || live[FactQoSInput] != "Ethernet1/4=AZ_SERVICES" {
		t.Fatalf("same classification under another policy: diff %+v, fact %q", diff, live[FactQoSInput])
	}

	// An MTU change on that port: the step writes FABCTL-QOS-COS, then
	// swaps the binding.
	for i := range sw.Ports {
		if sw.Ports[i].Name == "Ethernet1/4" {
			sw.Ports[i].MTU, sw.Ports[i].MTUFloor = 4000, false
		}
	}
	_, diff, steps = plan()
	if len(diff) != 1 || diff[0].Path != "port/Ethernet1/4/mtu" {
		t.Fatalf("mtu change: %+v", diff)
	}
	payload := strings.Join(steps[len(steps)-1].Payload, "\n")
	for _, want := range []string{"policy-map type qos FABCTL-QOS-COS\n", "interface Ethernet1/4\n",
		"  no service-policy type qos input AZ_SERVICES\n  service-policy type qos input FABCTL-QOS-COS"} {
		if !strings.Contains(payload, want) {
			t.Fatalf("payload lacks %q:\n%s", want, payload)
		}
	}
	apply(steps)
	run := string(emu.RunningConfig())
	if !strings.Contains(run, "policy-map type qos AZ_SERVICES\n") || strings.Contains(run, "input AZ_SERVICES") {
		t.Fatalf("AZ_SERVICES should stay on the switch, unbound:\n%s", run)
	}

	// A classification that differs (CoS 7 to qos-group 7, no class 7 in
	// the intent): planned on the port's trust, the step swaps back.
	emu.Edit(func(c *nxosemu.Config) {
		cm := &nxosemu.ClassMap{MatchAll: true}
		cm.COS[7] = true
		c.ClassMaps["AZ_CLUSTER"] = cm
		cl := &nxosemu.Class{Name: "AZ_CLUSTER", QosGroup: 7, Bandwidth: -1}
		c.Policies["qos"]["AZ_SERVICES"].Classes = append(c.Policies["qos"]["AZ_SERVICES"].Classes, cl)
		c.Interfaces["Ethernet1/4"].QoSInput = "AZ_SERVICES"
	})
	live, diff, steps = plan()
	if len(diff) != 1 || diff[0].Path != "port/Ethernet1/4/trust" || live["port/Ethernet1/4/trust"] != "pcp (AZ_SERVICES: cos 7 -> qos-group 7)" {
		t.Fatalf("differing classification: %+v", diff)
	}
	if payload := strings.Join(steps[0].Payload, "\n"); !strings.Contains(payload, "  no service-policy type qos input AZ_SERVICES\n  service-policy type qos input FABCTL-QOS-COS") {
		t.Fatalf("payload:\n%s", payload)
	}
	apply(steps)
}

// TestSwitchTrustPCP: a switch whose trust is pcp has no DSCP
// classification: every managed port gets FABCTL-QOS-COS and no
// FABCTL-QOS is written; it reads back as trust pcp and plans empty.
// Moving it to dscp binds FABCTL-QOS on the ports that follow the
// switch; moving it back removes FABCTL-QOS and its class-maps after
// the ports left it. A port trusting dscp on a pcp switch is refused
// (its DSCP map would be the switch's, which it does not have).
func TestSwitchTrustPCP(t *testing.T) {
	sw, emu, plan, apply := mixedLeaf(t)
	setTrust := func(swTrust string, ports map[string]string) {
		sw.Trust = swTrust
		for i := range sw.Ports {
			sw.Ports[i].Trust = swTrust
			if t, ok := ports[sw.Ports[i].Name]; ok {
				sw.Ports[i].Trust = t
			}
		}
	}
	inputs := func() string {
		var b strings.Builder
		for _, l := range strings.Split(string(emu.RunningConfig()), "\n") {
			if strings.HasPrefix(l, "interface Ethernet") || strings.Contains(l, "service-policy type qos input") || strings.HasPrefix(l, "policy-map type qos") {
				b.WriteString(strings.TrimSpace(l) + "\n")
			}
		}
		return b.String()
	}

	setTrust("pcp", nil)
	_, _, steps := plan()
	apply(steps)
	if got := inputs(); strings.Contains(got, QoSPolicy+"\n") || strings.Count(got, "input "+CoSPolicy) != len(sw.Ports) {
		t.Fatalf("pcp switch:\n%s", got)
	}

	setTrust("dscp", map[string]string{"Ethernet1/4": "pcp"})
	_, diff, steps := plan()
	if len(diff) == 0 || diff[0].Path != "dscp/0" && diff[len(diff)-1].Path != "trust" {
		t.Fatalf("to dscp: %+v", diff)
	}
	apply(steps)
	if got := inputs(); strings.Count(got, "input "+QoSPolicy+"\n") != len(sw.Ports)-1 || strings.Count(got, "input "+CoSPolicy) != 1 {
		t.Fatalf("dscp switch:\n%s", got)
	}

	setTrust("pcp", nil)
	_, _, steps = plan()
	payload := strings.Join(steps[0].Payload, "\n")
	if !strings.Contains(payload, "  no service-policy type qos input "+QoSPolicy+"\n  service-policy type qos input "+CoSPolicy) ||
		!strings.HasSuffix(payload, "no policy-map type qos "+QoSPolicy+"\nno class-map type qos match-any "+ClassMapPrefix+"3\nno class-map type qos match-any "+ClassMapPrefix+"6") {
		t.Fatalf("back to pcp:\n%s", payload)
	}
	apply(steps)
	if got := inputs(); strings.Contains(got, QoSPolicy+"\n") {
		t.Fatalf("FABCTL-QOS left:\n%s", got)
	}

	setTrust("pcp", map[string]string{"Ethernet1/2": "dscp"})
	if _, err := Build(sw); err == nil || !strings.Contains(err.Error(), "port Ethernet1/2: trust dscp on a switch that trusts pcp") {
		t.Fatalf("Build: %v", err)
	}
}
