package opensm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/lint"
)

// loadSM loads a spec directory (lint-clean) and returns its subnet manager.
func loadSM(t testing.TB, dir string) *intent.SubnetManager {
	t.Helper()
	s := testutil.Load(t, dir, spec.LoadOptions{Env: []string{}})
	for _, d := range lint.Run(s).Diagnostics {
		if d.Severity == lint.Error {
			t.Fatalf("%s: lint: %s: %s", dir, d.Summary, d.Detail)
		}
	}
	f := intent.Compile(s)
	if len(f.SubnetManagers) != 1 {
		t.Fatalf("%s: %d subnet managers, want 1", dir, len(f.SubnetManagers))
	}
	return f.SubnetManagers[0]
}

func smFromSrc(t testing.TB, src string) *intent.SubnetManager {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ib.fab.hcl"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return loadSM(t, dir)
}

func renderAll(t testing.TB, sm *intent.SubnetManager) map[string]string {
	t.Helper()
	files, err := (&Driver{}).Render(drivers.Target{Device: sm.Device, Intent: sm})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		out[f.Name] = string(f.Data)
	}
	return out
}

// TestGoldenRender pins the files rendered for examples/infiniband. The
// files' own headers name the opensm documents their syntax follows.
func TestGoldenRender(t *testing.T) {
	sm := loadSM(t, "../../../examples/infiniband")
	files, err := (&Driver{}).Render(drivers.Target{Device: sm.Device, Intent: sm})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
		t.Run(f.Name, func(t *testing.T) {
			testutil.Golden(t, filepath.Join("testdata", "infiniband-sm01-"+f.Name+".golden"), f.Data)
		})
	}
	if want := []string{"partitions.conf", "qos-policy.conf", "opensm.conf"}; !reflect.DeepEqual(names, want) {
		t.Errorf("rendered %v, want %v", names, want)
	}
}

// TestRenderReadsBack: what fabctl writes parses back to exactly the
// desired state, so a plan after apply is clean.
func TestRenderReadsBack(t *testing.T) {
	for _, c := range []struct {
		name string
		sm   *intent.SubnetManager
	}{
		{"example", loadSM(t, "../../../examples/infiniband")},
		{"no-qos", smFromSrc(t, noQoSSpec)},
		{"default-declared", smFromSrc(t, defaultDeclaredSpec)},
	} {
		t.Run(c.name, func(t *testing.T) {
			desired := c.sm.Flatten()
			for k := range desired {
				if strings.HasPrefix(k, intent.PathFabric) {
					delete(desired, k) // read from the ports, not the files
				}
			}
			files := renderAll(t, c.sm)
			got := parsePartitions(files["partitions.conf"])
			if c.sm.QoS {
				for k, v := range parseQoSPolicy(files["qos-policy.conf"]) {
					got[k] = v
				}
				for k, v := range openSMState(parseOpenSMConf(files["opensm.conf"]), managedOptions(desired)) {
					got[k] = v
				}
			}
			if d := intent.Diff(desired, got, nil); len(d) > 0 {
				t.Errorf("render does not read back: %v", d)
			}
		})
	}
}

const noQoSSpec = `
fabric "t" {
  transport = "infiniband"
}
class "default" {
  role    = "other"
  default = true
  bandwidth = 100
}
infiniband {
  subnet_manager = "h1"
  partition "storage" {
    pkey            = "0x8002"
    members         = ["h1:ib0"]
    limited_members = ["h2"]
  }
}
host "h1" {
  address = "192.0.2.10"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0002c90300000001"
  }
}
host "h2" {
  address = "192.0.2.11"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0002:c903:0000:0002"
  }
  nic "ib1" {
    device = "mlx5_1"
    guid   = "0x0002c90300000003"
  }
}
`

const defaultDeclaredSpec = `
fabric "t" {
  transport = "infiniband"
  rdma_mtu  = 2048
}
class "default" {
  role    = "other"
  default = true
  sl      = 0
  bandwidth = 100
}
infiniband {
  subnet_manager = "h1"
  sl2vl          = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15]
  partition "Default" {
    pkey            = "0x7fff"
    members         = ["SELF"]
    limited_members = ["ALL"]
    mtu             = 2048
    ipoib           = true
  }
}
host "h1" {
  address = "192.0.2.10"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0002c90300000001"
  }
}
`

func TestRenderMembers(t *testing.T) {
	sm := smFromSrc(t, noQoSSpec)
	if sm.QoS {
		t.Fatal("QoS on without any SL, SL2VL or VL arbitration in the spec")
	}
	files := renderAll(t, sm)
	if len(files) != 1 {
		t.Fatalf("rendered %d files without QoS, want partitions.conf only", len(files))
	}
	p := files["partitions.conf"]
	for _, want := range []string{
		"storage=0x0002, mtu=5 :\n",
		"\t0x0002c90300000001=full, # h1:ib0\n",
		"\t0x0002c90300000002, # h2:ib0\n", // a bare host is every NIC of it, limited
		"\t0x0002c90300000003 ; # h2:ib1\n",
		"Default=0x7fff, ipoib, mtu=5 :\n\tALL=full ;\n",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("partitions.conf lacks %q:\n%s", want, p)
		}
	}
}

func TestRenderRefuses(t *testing.T) {
	sm := smFromSrc(t, noQoSSpec)
	for _, c := range []struct {
		name string
		mod  func(*intent.SubnetManager)
		want string
	}{
		{"member without guid", func(sm *intent.SubnetManager) { sm.Partitions[0].Members[0].ID = "" }, "has no port GUID"},
		{"name opensm cannot parse", func(sm *intent.SubnetManager) { sm.Partitions[0].Name = "a b:c" }, "partition names"},
		{"rate opensm cannot set", func(sm *intent.SubnetManager) { sm.Partitions[0].Rate = 350e9 }, "not an InfiniBand rate"},
		{"mtu not an IB MTU", func(sm *intent.SubnetManager) { sm.Partitions[0].MTU = 3000 }, "not an IB MTU"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cp := *sm
			cp.Partitions = append([]intent.Partition(nil), sm.Partitions...)
			cp.Partitions[0].Members = append([]intent.PartitionMember(nil), sm.Partitions[0].Members...)
			c.mod(&cp)
			_, err := (&Driver{}).Render(drivers.Target{Device: cp.Device, Intent: &cp})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

// TestParsePartitions reads hand-written files the way opensm does.
func TestParsePartitions(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       intent.State
	}{
		{"comments, wrapping, spelling", `
# a comment
Default=0x7fff,ipoib : ALL=full; # trailing comment
compute = 0x8001 , ipoib , mtu=0x5, rate=21,sl=01 :
   0x2c90300000001 = full , # one
   2C90300000002 ;
`, intent.State{
			"partitions/Default/pkey": "0x7fff", "partitions/Default/ipoib": "true", "partitions/Default/member/ALL": "full",
			"partitions/compute/pkey": "0x0001", "partitions/compute/ipoib": "true", "partitions/compute/mtu": "4096",
			"partitions/compute/rate": "400G", "partitions/compute/sl": "1",
			"partitions/compute/member/0x0002c90300000001": "full",
			"partitions/unparsed/1":                        "2C90300000002", // no 0x: opensm reads it as decimal and fails too
		}},
		{"same pkey merges under the first name, defmember", `
ShareIO = 0x80 , defmember=full : 0x11, 0x12;
Other = 0x80 : 0x13, 0x14=limited, SELF=both;
`, intent.State{
			"partitions/ShareIO/pkey": "0x0080", "partitions/ShareIO/ipoib": "false",
			"partitions/ShareIO/member/0x0000000000000011": "full", "partitions/ShareIO/member/0x0000000000000012": "full",
			"partitions/ShareIO/member/0x0000000000000013": "limited", "partitions/ShareIO/member/0x0000000000000014": "limited",
			"partitions/ShareIO/member/SELF": "both",
		}},
		{"mgid lines, unknown flags, sl 0, no statement end", `
Default=0x7fff,ipoib,sl=0,scope=5:
	mgid=ff12:401b::0707,sl=1 # random IPv4 group
	ALL=full`, intent.State{
			"partitions/Default/pkey": "0x7fff", "partitions/Default/ipoib": "true", "partitions/Default/flag/scope": "5",
			"partitions/Default/mgid/ff12:401b::0707": "sl=1", "partitions/Default/member/ALL": "full",
		}},
		{"garbage", "no colon here;\nx=zz : 0x1;\n", intent.State{
			"partitions/unparsed/1": "no colon here", "partitions/unparsed/2": "x=zz : 0x1",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := parsePartitions(c.text)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
}

func TestParseQoSPolicy(t *testing.T) {
	text := `
port-groups
    port-group
        name: Storage
        port-guid: 0x10000000000001
    end-port-group
end-port-groups
qos-levels
    qos-level
        name: DEFAULT
        use: default QoS Level
        sl: 0
    end-qos-level
    qos-level
        name: WholeSet
        sl: 1
        mtu-limit: 4
        rate-limit: 5
        pkey: 0x1234
        packet-life: 8
    end-qos-level
end-qos-levels
qos-match-rules
    qos-match-rule
        use: by QoS class
        qos-class: 7-9,11
        qos-level-name: WholeSet
    end-qos-match-rule
    qos-match-rule
        qos-level-name: WholeSet
        pkey: 0x9234
    end-qos-match-rule
end-qos-match-rules
stray line
`
	want := intent.State{
		"qos-policy/section/port-groups":        "port-group; name: Storage; port-guid: 0x10000000000001; end-port-group",
		"qos-policy/level/DEFAULT/sl":           "0",
		"qos-policy/level/WholeSet/sl":          "1",
		"qos-policy/level/WholeSet/mtu-limit":   "2048",
		"qos-policy/level/WholeSet/rate-limit":  "5G",
		"qos-policy/level/WholeSet/pkey":        "0x1234",
		"qos-policy/level/WholeSet/packet-life": "8",
		"qos-policy/match/1":                    "qos-class=7-9,11 qos-level-name=WholeSet",
		"qos-policy/match/2":                    "pkey=0x1234 qos-level-name=WholeSet",
		"qos-policy/unparsed/1":                 "stray line",
	}
	if got := parseQoSPolicy(text); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestEditOpenSMConf(t *testing.T) {
	desired := intent.State{"opensm/qos": "TRUE", "opensm/qos_sl2vl": "0,1,2,0,0,0,0,0,0,0,0,0,0,0,0,0"}
	live := `# OpenSM configuration
qos FALSE
qos_policy_file /etc/opensm/qos-policy.conf
qos_sl2vl (null)
qos_ca_sl2vl 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7
qos_sl2vl 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1
qos_vlarb_low 0:4
`
	got := editOpenSMConf(live, desired, "f")
	want := `# OpenSM configuration
qos TRUE
qos_policy_file /etc/opensm/qos-policy.conf
qos_sl2vl 0,1,2,0,0,0,0,0,0,0,0,0,0,0,0,0
qos_ca_sl2vl (null)
qos_vlarb_low 0:4
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// The edited file reads back as desired; the vlarb line fabctl does
	// not manage stays and is not reported.
	if st := openSMState(parseOpenSMConf(got), managedOptions(desired)); intent.Diff(desired, st, nil) != nil {
		t.Errorf("edited file reads back as %v", st)
	}
	// An empty or missing file gets fabctl's lines appended.
	got = editOpenSMConf("", desired, "f")
	if !strings.HasPrefix(got, "# InfiniBand QoS of fabric \"f\"") || !strings.Contains(got, "\nqos TRUE\nqos_sl2vl 0,1,2,") {
		t.Errorf("new file:\n%s", got)
	}
	// Editing is idempotent.
	if again := editOpenSMConf(got, desired, "f"); again != got {
		t.Errorf("second edit changed the file:\n%s", again)
	}
}

// TestEditOpenSMConfVLs: qos_max_vls and qos_high_limit are set like the
// other managed options: the generic line replaced, a per-type override
// unset, a missing option appended; the file reads back as desired.
func TestEditOpenSMConfVLs(t *testing.T) {
	desired := intent.State{"opensm/qos": "TRUE", "opensm/qos_max_vls": "4", "opensm/qos_high_limit": "0"}
	live := `qos TRUE
qos_max_vls 15
qos_ca_max_vls 8
qos_vlarb_low 0:4
`
	got := editOpenSMConf(live, desired, "f")
	for _, line := range []string{"\nqos_max_vls 4\n", "\nqos_ca_max_vls (null)\n", "\nqos_high_limit 0\n", "\nqos_vlarb_low 0:4\n"} {
		if !strings.Contains(got, line) {
			t.Errorf("edited file lacks %q:\n%s", strings.TrimSpace(line), got)
		}
	}
	if strings.Contains(got, "qos_max_vls 15") || strings.Contains(got, "qos_ca_max_vls 8") {
		t.Errorf("old values left:\n%s", got)
	}
	if st := openSMState(parseOpenSMConf(got), managedOptions(desired)); intent.Diff(desired, st, nil) != nil {
		t.Errorf("edited file reads back as %v", st)
	}
	lines := string(renderOpenSMLines(desired, "f"))
	if !strings.Contains(lines, "\nqos TRUE\nqos_max_vls 4\nqos_high_limit 0\n") {
		t.Errorf("rendered lines, in opensm.conf's order:\n%s", lines)
	}
}
