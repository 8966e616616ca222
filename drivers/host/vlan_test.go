package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

const vlanNS = "fabctl-vlan-t1"

// A RoCEv1 host on a veth: the RDMA interface is VLAN 100 on v0a; classes
// on priorities 0, 3 and 5 and ToS 8 (rdma_cm's skb priority 2,
// rt_tos2priority) give the egress map 2:3 3:3 5:5.
const rocev1VLANSpec = `
fabric "t" {
  transport          = "rocev1"
  trust              = "pcp"
  congestion_control = "pfc-only"
  mtu                = 9000
  rdma_tos           = 8
}
class "roce" {
  role      = "rdma"
  priority  = 3
  lossless  = true
  bandwidth = 40
}
class "bulk" {
  role      = "other"
  priority  = 5
  bandwidth = 20
}
class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 40
}
host "h1" {
  connect = "netns:` + vlanNS + `"
  nic "v0a" {
    vlan      = 100
    addresses = ["198.18.5.1/24"]
  }
}
`

// requireVLAN skips when the kernel has no 802.1Q support (no 8021q
// module: this machine's own kernel may lack it). The VM testbed's guest
// kernel has it and runs these tests (testbed/vm/sections/rocev1.sh),
// where FABTB_GUEST=1 and CI=true turn a skip into a failure.
func requireVLAN(t *testing.T) {
	t.Helper()
	_ = exec.Command("modprobe", "8021q").Run()
	out, err := exec.Command("ip", "-n", vlanNS, "link", "add", "link", "v0a", "name", "fabprobe", "type", "vlan", "id", "4094").CombinedOutput()
	if err == nil {
		ipNS(t, "link", "del", "dev", "fabprobe")
		return
	}
	msg := "the kernel has no 802.1Q VLAN support (CONFIG_VLAN_8021Q): " + strings.TrimSpace(string(out)) +
		"; the VM testbed runs these tests (testbed/vm/run.sh rocev1)"
	if os.Getenv("FABTB_GUEST") == "1" && testutil.CI() {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func ipNS(t *testing.T, args ...string) string {
	t.Helper()
	return testutil.Run(t, append([]string{"ip", "-n", vlanNS}, args...)...)
}

// vlanShow is what iproute2 (not fabctl) reports for the VLAN interface.
type vlanShow struct {
	MTU      int `json:"mtu"`
	LinkInfo struct {
		Kind string `json:"info_kind"`
		Data struct {
			ID     int `json:"id"`
			Egress []struct {
				From int `json:"from"`
				To   int `json:"to"`
			} `json:"egress_qos"`
		} `json:"info_data"`
	} `json:"linkinfo"`
	Flags []string `json:"flags"`
}

func ipVLAN(t *testing.T, name string) (vlanShow, string) {
	t.Helper()
	var v []vlanShow
	out := ipNS(t, "-d", "-j", "link", "show", "dev", name)
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v) != 1 {
		t.Fatalf("ip -j link show %s: %v\n%s", name, err, out)
	}
	var m []string
	for _, e := range v[0].LinkInfo.Data.Egress {
		m = append(m, strconv.Itoa(e.From)+":"+strconv.Itoa(e.To))
	}
	return v[0], strings.Join(m, ",")
}

func changesByPath(dp *plan.DevicePlan) map[string]intent.AttrChange {
	got := map[string]intent.AttrChange{}
	for _, c := range dp.Changes {
		got[c.Path] = c
	}
	return got
}

// payloadOf is the payload of the NIC's vlan step.
func payloadOf(dp *plan.DevicePlan, nic string) []string {
	var out []string
	for _, st := range dp.Steps {
		if len(st.Paths) > 0 && strings.HasPrefix(st.Paths[0], "nic/"+nic+"/vlan/") {
			out = append(out, st.Payload...)
		}
	}
	return out
}

// TestVLANPlanApplyDrift: from a bare veth the plan creates the VLAN with
// its egress-qos-map, MTU and address; apply makes it (iproute2 reads it
// back); the re-plan is clean; an egress map changed with `ip link set ...
// type vlan egress-qos-map` behind fabctl's back is a change and drift,
// and the next apply repairs only that (stale entries to PCP 0); an id
// changed behind its back re-creates the interface.
func TestVLANPlanApplyDrift(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	newNS(t, vlanNS, 1)
	requireVLAN(t)
	// The NIC's own address is not fabctl's once the RDMA interface is the VLAN.
	ipNS(t, "addr", "add", "198.18.6.1/24", "dev", "v0a")
	s, f := loadSpec(t, rocev1VLANSpec)
	if got := f.Hosts[0].NICs[0].VLANName; got != "v0a.100" {
		t.Fatalf("intent VLANName = %q", got)
	}
	reg := registry(t)

	p := plan.Make(context.Background(), s, f, reg, plan.Options{})
	dp := p.Device("host.h1")
	if dp.Error != "" {
		t.Fatal(dp.Error)
	}
	got := changesByPath(dp)
	for path, want := range map[string]string{
		"nic/v0a/vlan/interface":      "v0a.100",
		"nic/v0a/vlan/id":             "100",
		"nic/v0a/vlan/egress_qos_map": "2:3,3:3,5:5",
		"nic/v0a/vlan/mtu":            "9000",
		"nic/v0a/vlan/addresses":      "198.18.5.1/24",
		"nic/v0a/mtu":                 "9000",
	} {
		if c := got[path]; c.After != want {
			t.Errorf("%s: change %+v, want -> %q", path, c, want)
		}
	}
	if _, ok := got["nic/v0a/addresses"]; ok {
		t.Errorf("the NIC's own addresses are planned: %+v", got["nic/v0a/addresses"])
	}
	wantPayload := []string{
		"ip link add link v0a name v0a.100 mtu 9000 type vlan id 100 egress-qos-map 2:3 3:3 5:5 (netns " + vlanNS + ")",
		"ip addr add 198.18.5.1/24 dev v0a.100 (netns " + vlanNS + ")",
		"ip link set dev v0a up (netns " + vlanNS + ")",
		"ip link set dev v0a.100 up (netns " + vlanNS + ")",
	}
	if pl := payloadOf(dp, "v0a"); strings.Join(pl, "\n") != strings.Join(wantPayload, "\n") {
		t.Fatalf("payload\n%s\nwant\n%s", strings.Join(pl, "\n"), strings.Join(wantPayload, "\n"))
	}

	res, err := applyPlan(t, p, f, reg)
	if err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("apply: %v %+v", err, res.Devices[0])
	}
	v, m := ipVLAN(t, "v0a.100")
	if v.LinkInfo.Kind != "vlan" || v.LinkInfo.Data.ID != 100 || v.MTU != 9000 || m != "2:3,3:3,5:5" {
		t.Fatalf("ip -d link show v0a.100 after apply: %+v map %q", v, m)
	}
	if out := ipNS(t, "-o", "addr", "show", "dev", "v0a.100"); !strings.Contains(out, "198.18.5.1/24") {
		t.Fatalf("ip addr v0a.100:\n%s", out)
	}
	if out := ipNS(t, "-o", "addr", "show", "dev", "v0a"); !strings.Contains(out, "198.18.6.1/24") {
		t.Fatalf("the NIC's own address was touched:\n%s", out)
	}

	p2 := plan.Make(context.Background(), s, f, reg, plan.Options{})
	if d := p2.Device("host.h1"); d.Error != "" || d.HasChanges() {
		t.Fatalf("re-plan not clean: %v %+v", d.Error, d.Changes)
	}
	applied := map[string]intent.State{"host.h1": p2.Device("host.h1").Desired}

	// Behind fabctl's back: 3 -> PCP 5 and a new 1 -> 2 entry.
	ipNS(t, "link", "set", "dev", "v0a.100", "type", "vlan", "egress-qos-map", "3:5", "1:2")
	p3 := plan.Make(context.Background(), s, f, reg, plan.Options{Applied: applied})
	d3 := p3.Device("host.h1")
	if d3.Error != "" {
		t.Fatal(d3.Error)
	}
	if len(d3.Changes) != 1 || d3.Changes[0].Path != "nic/v0a/vlan/egress_qos_map" ||
		d3.Changes[0].Before != "1:2,2:3,3:5,5:5" || d3.Changes[0].After != "2:3,3:3,5:5" {
		t.Fatalf("changes after the map edit: %+v", d3.Changes)
	}
	if len(d3.Drift) != 1 || d3.Drift[0].Path != "nic/v0a/vlan/egress_qos_map" {
		t.Fatalf("drift after the map edit: %+v", d3.Drift)
	}
	wantPayload = []string{
		"ip link set dev v0a.100 type vlan egress-qos-map 1:0 2:3 3:3 5:5 (netns " + vlanNS + ")",
		"ip link set dev v0a up (netns " + vlanNS + ")",
		"ip link set dev v0a.100 up (netns " + vlanNS + ")",
	}
	if pl := payloadOf(d3, "v0a"); strings.Join(pl, "\n") != strings.Join(wantPayload, "\n") {
		t.Fatalf("repair payload\n%s\nwant\n%s", strings.Join(pl, "\n"), strings.Join(wantPayload, "\n"))
	}
	if res, err := applyPlan(t, p3, f, reg); err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("repair apply: %v %+v", err, res.Devices[0])
	}
	if _, m := ipVLAN(t, "v0a.100"); m != "2:3,3:3,5:5" {
		t.Fatalf("map after repair %q", m)
	}

	// The id changed behind fabctl's back: the interface is re-created.
	ipNS(t, "link", "del", "dev", "v0a.100")
	ipNS(t, "link", "add", "link", "v0a", "name", "v0a.100", "type", "vlan", "id", "200")
	p4 := plan.Make(context.Background(), s, f, reg, plan.Options{})
	d4 := p4.Device("host.h1")
	c := changesByPath(d4)["nic/v0a/vlan/id"]
	if c.Before != "200" || c.After != "100" || c.Disruptive == "" {
		t.Fatalf("id change %+v", c)
	}
	if pl := payloadOf(d4, "v0a"); len(pl) == 0 || pl[0] != "ip link del dev v0a.100 (netns "+vlanNS+")" {
		t.Fatalf("re-create payload %q", pl)
	}
	if res, err := applyPlan(t, p4, f, reg); err != nil || res.Devices[0].Status != apply.StatusApplied {
		t.Fatalf("re-create apply: %v %+v", err, res.Devices[0])
	}
	if v, m := ipVLAN(t, "v0a.100"); v.LinkInfo.Data.ID != 100 || m != "2:3,3:3,5:5" || v.MTU != 9000 {
		t.Fatalf("after re-create: %+v %q", v, m)
	}
	if d := plan.Make(context.Background(), s, f, reg, plan.Options{}).Device("host.h1"); d.HasChanges() {
		t.Fatalf("re-plan after re-create: %+v", d.Changes)
	}
}

// TestVLANRollback: a transaction that created the VLAN rolls back to no
// VLAN; one that changed an existing VLAN's map and MTU rolls back to the
// old map (stale entries back), MTU and addresses.
func TestVLANRollback(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	newNS(t, vlanNS, 1)
	requireVLAN(t)
	ipNS(t, "link", "set", "dev", "v0a", "mtu", "9000")
	s, f := loadSpec(t, rocev1VLANSpec)
	reg := registry(t)
	d := New().(*Driver)
	h := f.Hosts[0]
	tg := plan.Target(plan.Unit{Device: h.Device, Intent: h}, plan.Options{})
	steps := func() []drivers.Change {
		dp := plan.Make(context.Background(), s, f, reg, plan.Options{}).Device("host.h1")
		if dp.Error != "" {
			t.Fatal(dp.Error)
		}
		if _, err := d.Read(context.Background(), tg); err != nil {
			t.Fatal(err)
		}
		return dp.Steps
	}

	r, err := d.Apply(context.Background(), tg, steps(), drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ipVLAN(t, "v0a.100")
	if err := d.Rollback(context.Background(), tg, r); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command("ip", "-n", vlanNS, "link", "show", "dev", "v0a.100").Run(); err == nil {
		t.Fatal("rollback left the VLAN the transaction created")
	}

	ipNS(t, "link", "add", "link", "v0a", "name", "v0a.100", "mtu", "1500", "type", "vlan", "id", "100", "egress-qos-map", "1:1", "3:6")
	ipNS(t, "addr", "add", "198.18.7.7/24", "dev", "v0a.100")
	r, err = d.Apply(context.Background(), tg, steps(), drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, m := ipVLAN(t, "v0a.100"); m != "2:3,3:3,5:5" || v.MTU != 9000 {
		t.Fatalf("after apply: %+v %q", v, m)
	}
	if err := d.Rollback(context.Background(), tg, r); err != nil {
		t.Fatal(err)
	}
	if v, m := ipVLAN(t, "v0a.100"); m != "1:1,3:6" || v.MTU != 1500 {
		t.Fatalf("after rollback: %+v %q", v, m)
	}
	if out := ipNS(t, "-o", "addr", "show", "dev", "v0a.100"); !strings.Contains(out, "198.18.7.7/24") || strings.Contains(out, "198.18.5.1") {
		t.Fatalf("addresses after rollback:\n%s", out)
	}
}

// TestVLANNameTaken: a link that has the VLAN interface's name but is not
// a VLAN of the NIC, or a VLAN of the NIC with the id under another name,
// is reported (plan: not expressible, with what to do) and never touched.
func TestVLANNameTaken(t *testing.T) {
	testutil.RequireRoot(t, rootWhy)
	for _, tc := range []struct {
		name  string
		setup [][]string
		want  string
	}{
		{"veth", [][]string{{"link", "add", "v0a.100", "type", "veth", "peer", "name", "x0"}},
			"v0a.100 exists but is a veth link, not a VLAN of v0a; remove or rename it, or set vlan_interface on the nic"},
		{"other parent", [][]string{{"link", "add", "link", "v0b", "name", "v0a.100", "type", "vlan", "id", "100"}},
			"v0a.100 exists but is a VLAN of another device"},
		{"same id", [][]string{{"link", "add", "link", "v0a", "name", "rdma100", "type", "vlan", "id", "100"}},
			`v0a already has VLAN 100 as rdma100; rename it (ip link set dev rdma100 name v0a.100) or set vlan_interface = "rdma100" on the nic`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			newNS(t, vlanNS, 1)
			requireVLAN(t)
			for _, a := range tc.setup {
				ipNS(t, a...)
			}
			s, f := loadSpec(t, rocev1VLANSpec)
			reg := registry(t)
			p := plan.Make(context.Background(), s, f, reg, plan.Options{})
			dp := p.Device("host.h1")
			found := false
			for _, u := range dp.Unexpressible {
				if u.Path == "nic/v0a/vlan/egress_qos_map" {
					found = strings.Contains(u.Reason, tc.want)
					if !found {
						t.Fatalf("reason %q, want %q", u.Reason, tc.want)
					}
				}
			}
			if !found {
				t.Fatalf("not reported: %+v / %+v", dp.Unexpressible, dp.Changes)
			}
			for _, c := range dp.Changes {
				if strings.HasPrefix(c.Path, "nic/v0a/vlan/") {
					t.Fatalf("planned %+v", c)
				}
			}
		})
	}
}

// TestVLANSpec: the interface name defaults to <nic>.<vlan>, vlan_interface
// overrides it, and names the kernel would refuse are load errors at the
// attribute; InfiniBand NICs get no VLAN interface.
func TestVLANSpec(t *testing.T) {
	base := `
fabric "t" {
  transport = "%s"
}
host "h1" {
  connect = "local"
  nic "%s" {
    %s
  }
}
`
	for _, tc := range []struct {
		name, transport, nic, body string
		want, err                  string
	}{
		{"default", "rocev1", "ens1f0", "vlan = 100", "ens1f0.100", ""},
		{"override", "rocev1", "ens1f0", "vlan = 100\n vlan_interface = \"rdma0\"", "rdma0", ""},
		{"untagged", "rocev1", "ens1f0", "", "", ""},
		{"roce v2 too", "rocev2", "ens1f0", "vlan = 7", "ens1f0.7", ""},
		{"infiniband", "infiniband", "ib0", "vlan = 7", "", ""},
		{"no vlan", "rocev1", "ens1f0", "vlan_interface = \"rdma0\"", "", "t.fab.hcl:8,22-29: VLAN interface without a VLAN"},
		{"too long", "rocev1", "enp129s0f0np0", "vlan = 1000", "", "t.fab.hcl:8,12-16: Invalid VLAN interface name"},
		{"bad char", "rocev1", "ens1f0", "vlan = 1\n vlan_interface = \"a/b\"", "", "Invalid VLAN interface name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := fmt.Sprintf(base, tc.transport, tc.nic, tc.body)
			s, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(text)}}, spec.LoadOptions{})
			if tc.err != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), tc.err) {
					t.Fatalf("diags %v, want %q", diags, tc.err)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			f := intent.Compile(s)
			if got := f.Hosts[0].NICs[0].VLANName; got != tc.want {
				t.Fatalf("VLANName %q, want %q", got, tc.want)
			}
			st := f.Hosts[0].Flatten()
			_, tagged := st["nic/"+tc.nic+"/vlan/id"]
			if _, own := st["nic/"+tc.nic+"/addresses"]; tagged == own || tagged != (tc.want != "") {
				t.Fatalf("state: vlan paths %v, NIC addresses %v", tagged, own)
			}
		})
	}
}

// TestVLANDescribe: the plan steps of the vlan feature, pure.
func TestVLANDescribe(t *testing.T) {
	n := &intent.NIC{Name: "ens1f0", VLAN: 100, VLANName: "ens1f0.100", MTU: 9000, Addresses: []string{"192.168.100.11/24"},
		TCs: []intent.TC{{TC: 0}, {TC: 3}}}
	for _, tc := range []struct {
		name    string
		cs      []intent.AttrChange
		summary string
		payload []string
	}{
		{"map", []intent.AttrChange{{Path: "nic/ens1f0/vlan/egress_qos_map", Action: intent.Update, Before: "2:2,3:5", After: "3:3"}},
			"ens1f0: egress-qos-map 3:3", []string{
				"ip link set dev ens1f0.100 type vlan egress-qos-map 2:0 3:3",
				"ip link set dev ens1f0 up",
				"ip link set dev ens1f0.100 up"}},
		{"mtu and addresses", []intent.AttrChange{
			{Path: "nic/ens1f0/vlan/addresses", Action: intent.Update, Before: "10.0.0.1/24", After: "192.168.100.11/24"},
			{Path: "nic/ens1f0/vlan/mtu", Action: intent.Update, Before: "1500", After: "9000"}},
			"ens1f0: MTU 9000, addresses 192.168.100.11/24", []string{
				"ip link set dev ens1f0.100 mtu 9000",
				"ip addr del 10.0.0.1/24 dev ens1f0.100",
				"ip addr add 192.168.100.11/24 dev ens1f0.100",
				"ip link set dev ens1f0 up",
				"ip link set dev ens1f0.100 up"}},
		{"recreate", []intent.AttrChange{{Path: "nic/ens1f0/vlan/id", Action: intent.Update, Before: "200", After: "100"}},
			"ens1f0: re-create VLAN ens1f0.100 (id 200 -> 100), egress-qos-map 3:3, MTU 9000", []string{
				"ip link del dev ens1f0.100",
				"ip link add link ens1f0 name ens1f0.100 mtu 9000 type vlan id 100 egress-qos-map 3:3",
				"ip addr add 192.168.100.11/24 dev ens1f0.100",
				"ip link set dev ens1f0 up",
				"ip link set dev ens1f0.100 up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum, pl := describeVLAN("ens1f0", n, tc.cs, "")
			if sum != tc.summary || strings.Join(pl, "\n") != strings.Join(tc.payload, "\n") {
				t.Fatalf("got %q\n%s\nwant %q\n%s", sum, strings.Join(pl, "\n"), tc.summary, strings.Join(tc.payload, "\n"))
			}
		})
	}
}

// TestQoSMapForms: the state form round-trips and the update zeroes only
// stale entries.
func TestQoSMapForms(t *testing.T) {
	for _, tc := range []struct {
		have, want, update string
	}{
		{"", "3:3", "3:3"},
		{"3:3", "3:3", "3:3"},
		{"1:2,3:5", "3:3,5:5", "1:0 3:3 5:5"},
		{"3:3,9:4", "", "3:0 9:0"},
	} {
		have, want := parseQoSMap(tc.have), parseQoSMap(tc.want)
		if intent.FormatQoSMap(have) != tc.have || intent.FormatQoSMap(want) != tc.want {
			t.Fatalf("round trip %q %q", tc.have, tc.want)
		}
		if got := qosArgs(egressUpdate(have, want)); got != tc.update {
			t.Fatalf("update %q -> %q: %q, want %q", tc.have, tc.want, got, tc.update)
		}
	}
}
