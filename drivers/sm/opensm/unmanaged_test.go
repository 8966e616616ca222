package opensm

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// sitePartition is a partition the site keeps by hand, in
// doc/partition-config.txt's form (linux-rdma/opensm: header "name=pkey,
// flags :", members, an mgid line defining a multicast group, ';').
const sitePartition = `
# the storage team's partition
storage=0x8010, ipoib, mtu=5 :
        mgid=ff12:401b::0707,sl=1 # their multicast group
        0x0c42a10300000b01=full, 0x0c42a10300000c01 ;
`

// sitePortGroups is a QoS policy port-groups section
// (doc/QoS_management_in_OpenSM.txt, "Full QoS Policy File").
const sitePortGroups = `port-groups
    port-group
        name: Storage
        port-guid: 0x0c42a10300000b01
    end-port-group
end-port-groups
`

// TestSSHUnmanaged (issue 36): the infiniband block's unmanaged keys.
// A partition, a per-CA QoS option and a QoS policy section the site
// keeps by hand are plan changes without them; with them the plan is
// empty and lists them. An apply that rewrites partitions.conf and
// opensm.conf keeps the partition's statement and the option's line as
// they were; one that would drop the unmanaged policy section is refused
// by apply's verification and the files are rolled back.
func TestSSHUnmanaged(t *testing.T) {
	r, s, f := labApplied(t)
	r.write(r.opts.PartitionsFile, r.read(r.opts.PartitionsFile)+sitePartition)
	caSL2VL := "qos_ca_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7"
	r.write(r.opts.ConfFile, strings.Replace(r.read(r.opts.ConfFile), "qos_ca_sl2vl (null)", caSL2VL, 1))
	r.write(r.opts.QoSPolicyFile, sitePortGroups+"\n"+r.read(r.opts.QoSPolicyFile))

	paths := func(cs []intent.AttrChange) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.Path)
		}
		slices.Sort(out)
		return out
	}
	site := []string{"opensm/qos_ca_sl2vl", "partitions/storage/ipoib", "partitions/storage/member/0x0c42a10300000b01",
		"partitions/storage/member/0x0c42a10300000c01", "partitions/storage/mgid/ff12:401b::0707", "partitions/storage/mtu",
		"partitions/storage/pkey", "qos-policy/section/port-groups"}
	if got := paths(r.plan(s, f).Changes); !slices.Equal(got, site) {
		t.Fatalf("without unmanaged, plan changes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(site, "\n"))
	}

	unmanaged := `  unmanaged = {
    "partitions/storage"             = "the storage team's partition"
    "opensm/qos_ca_sl2vl"            = "the CAs' SL2VL is the site's"
    "qos-policy/section/port-groups" = "the site's port groups"
  }
`
	ib := strings.Replace(labIB, "  subnet_manager = \"sm01\"\n", "  subnet_manager = \"sm01\"\n"+unmanaged, 1)
	s, f = r.spec(ib)
	dp := r.plan(s, f)
	if dp.HasChanges() {
		t.Fatalf("with unmanaged, plan changes %v", dp.Changes)
	}
	var listed []string
	for _, u := range dp.Unmanaged {
		listed = append(listed, u.Path)
		if u.Reason == "" || u.Absent {
			t.Errorf("unmanaged %+v", u)
		}
	}
	if !slices.Equal(listed, site) {
		t.Errorf("plan lists unmanaged\n%s\nwant\n%s", strings.Join(listed, "\n"), strings.Join(site, "\n"))
	}

	// A managed change to partitions.conf and opensm.conf: the site's
	// statement and option line stay.
	changed := strings.Replace(ib, `vl_arb_low     = { "0" = 64, "1" = 128 }`, `vl_arb_low     = { "0" = 64, "1" = 192 }`, 1)
	changed = strings.Replace(changed, `members = ["cn01:ib0", "cn02:ib0", "sm01:ib0"]`, `members = ["cn01:ib0", "sm01:ib0"]`, 1)
	s, f = r.spec(changed)
	dp = r.plan(s, f)
	want := []string{"opensm/qos_vlarb_low", "partitions/compute/member/0x0c42a10300000c01"}
	if got := paths(dp.Changes); !slices.Equal(got, want) {
		t.Fatalf("plan changes %v, want %v", got, want)
	}
	if res, err := r.apply(s, f, dp); err != nil || res.Counts.Failed > 0 {
		t.Fatalf("apply with unmanaged partition and option: %v %+v", err, res.Devices)
	}
	parts, conf := r.read(r.opts.PartitionsFile), r.read(r.opts.ConfFile)
	if !strings.Contains(parts, "storage=0x8010, ipoib, mtu=5 :\n        mgid=ff12:401b::0707,sl=1\n        0x0c42a10300000b01=full, 0x0c42a10300000c01;\n") {
		t.Errorf("partitions.conf does not keep the storage statement:\n%s", parts)
	}
	if !strings.Contains(conf, caSL2VL+"\n") || !strings.Contains(conf, "qos_vlarb_low 0:64,1:192\n") {
		t.Errorf("opensm.conf:\n%s", conf)
	}
	if dp := r.plan(s, f); dp.HasChanges() {
		t.Errorf("re-plan after apply: %v", dp.Changes)
	}

	// A change to the QoS policy: fabctl renders it whole, without the
	// port-groups section the spec leaves unmanaged; apply's
	// verification refuses and restores the previous files.
	qosBefore, partsBefore := r.read(r.opts.QoSPolicyFile), r.read(r.opts.PartitionsFile)
	s, f = r.spec(strings.Replace(changed, "    sl      = 1\n", "    sl      = 2\n", 1))
	dp = r.plan(s, f)
	res, err := r.apply(s, f, dp)
	if err == nil || res == nil || res.Counts.Failed != 1 {
		t.Fatalf("apply dropping an unmanaged section: %v %+v", err, res)
	}
	d := res.Devices[0]
	if d.Status != apply.StatusFailed || !strings.Contains(d.Error, "unmanaged") || !strings.Contains(d.Error, "qos-policy/section/port-groups") {
		t.Errorf("apply result %+v", d)
	}
	if got := r.read(r.opts.QoSPolicyFile); got != qosBefore {
		t.Errorf("qos-policy.conf not rolled back:\n%s", got)
	}
	if got := r.read(r.opts.PartitionsFile); got != partsBefore {
		t.Errorf("partitions.conf not rolled back:\n%s", got)
	}
}

// FuzzKeptPartitions: whatever partitions.conf the subnet manager has,
// the file rendered with the statements kept for partitions the spec
// leaves unmanaged ("partitions/*") parses back with the spec's own
// partitions exactly as the spec has them, and with nothing but them
// and the kept partitions (no statement opensm could not read, no kept
// one merged into the spec's by its P_Key).
func FuzzKeptPartitions(f *testing.F) {
	seedFile(f, "infiniband-sm01-partitions.conf.golden")
	if b, err := os.ReadFile("../../../testdata/vendor/opensm/partitions.conf"); err == nil {
		f.Add(string(b))
	}
	f.Add(sitePartition)
	f.Add("compute=0x2:ALL;\n0x1:SELF;\nx=0x0001:ALL;\ny=0x8001,ipoib:0x1=full;\nz:ALL;z:SELF;")
	f.Add("a=0x10:ALL # c ; d\n;b=0x10:SELF;c=0x11:\n mgid=ff12::1,sl=1\n ALL=full")
	f.Add("bad stmt;a=0xzz:ALL;=0x12:ALL;")
	sm := &intent.SubnetManager{
		Partitions: []intent.Partition{
			{Name: "compute", PKey: 0x0001, IPoIB: true, MTU: 2048, SL: 1, Members: []intent.PartitionMember{{ID: "0x0c42a10300000b01", Full: true}, {ID: "ALL"}}},
			{Name: "Default", PKey: intent.DefaultPKey, IPoIB: true, Members: []intent.PartitionMember{{ID: "ALL", Full: true}}, Implicit: true},
		},
		Unmanaged: spec.Acceptances{"partitions/*": "the site's"},
	}
	want := intent.State{}
	for k, v := range sm.Flatten() {
		if strings.HasPrefix(k, intent.PathPartitions) {
			want[k] = v
		}
	}
	f.Fuzz(func(t *testing.T, live string) {
		kept := keptPartitions(sm, live)
		b, err := renderPartitionsKeeping(sm, "f", kept)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{"compute": true, "Default": true}
		for _, k := range kept {
			names[k.name] = true
		}
		got := parsePartitions(string(b))
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("%s = %q, want %q (kept %q):\n%s", k, got[k], v, kept, b)
			}
		}
		for k := range got {
			name, rest, _ := strings.Cut(strings.TrimPrefix(k, intent.PathPartitions), "/")
			if !names[name] || name == "unparsed" {
				t.Fatalf("rendered file reads %s (kept %q):\n%s", k, kept, b)
			}
			if _, ok := want[k]; !ok && (name == "compute" || name == "Default") {
				t.Fatalf("kept statements add %s/%s to the spec's partition:\n%s", name, rest, b)
			}
		}
	})
}
