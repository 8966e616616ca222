package importer_test

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

const ibInventory = `fabric "ib" {
  transport = "infiniband"
  rdma_mtu  = 2048
}

class "default" {
  role     = "other"
  priority = 0
  default  = true
}

host "sm01" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0000000000000101"
  }
}

infiniband {
  subnet_manager = "sm01"
}
`

// TestImportSubnetManagerHostile: a subnet manager's state holding
// values no opensm file gives (as a misbehaving driver or device could
// report them) is never written into the spec: import still writes a
// spec that loads, and lists each such value as left out.
func TestImportSubnetManagerHostile(t *testing.T) {
	live := intent.State{
		"partitions/ok/pkey":                      "0x0001",
		"partitions/ok/ipoib":                     "true",
		"partitions/ok/mtu":                       "3000",
		"partitions/ok/rate":                      "fast",
		"partitions/ok/sl":                        "99",
		"partitions/ok/member/0x0000000000000101": "full",
		"partitions/ok/member/\"}\ninjected {":    "full",
		"partitions/badkey/pkey":                  "0x10000\"",
		"partitions/zero/pkey":                    "0x0000",
		"partitions/na me\"/pkey":                 "0x0003",
		"opensm/qos":                              "TRUE",
		"opensm/qos_sl2vl":                        "0,1,2",
		"opensm/qos_vlarb_low":                    "0:64,0:64",
		"opensm/qos_max_vls":                      "3",
		"opensm/qos_high_limit":                   "300",
		"qos-policy/level/DEFAULT/sl":             "16",
		"qos-policy/section/qos-ulps":             "default : 0",
		"partitions/ok/mgid/ff12::*":              "",
	}
	res, err := importer.Import([]spec.File{{Name: "inv.fab.hcl", Data: []byte(ibInventory)}},
		map[string]*importer.Observed{"sm.sm01": {Live: live}}, importer.Options{Load: load(t), Name: "imported.fab.hcl"})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.HCL)
	if _, diags := load(t)([]spec.File{{Name: "imported.fab.hcl", Data: res.HCL}}); diags.HasErrors() {
		t.Fatalf("the written spec does not load: %v\n%s", diags, out)
	}
	for _, bad := range []string{"injected", "3000", "fast", "99", "0x10000", "na me", "sl2vl", "vl_arb_low", "max_vls", "vl_high_limit", "ff12"} {
		if strings.Contains(out, bad) {
			t.Errorf("the written spec holds %q:\n%s", bad, out)
		}
	}
	// The partitions it cannot write are named only as unmanaged keys
	// (what plan leaves as opensm runs it), never as partitions.
	for _, name := range []string{"badkey", "zero"} {
		if strings.Count(out, name) != 1 || !strings.Contains(out, `"partitions/`+name+`"`) {
			t.Errorf("partition %q is not written as an unmanaged key only:\n%s", name, out)
		}
	}
	if !strings.Contains(out, `partition "ok"`) || !strings.Contains(out, `"sm01:ib0"`) {
		t.Errorf("the partition the spec can say is not written:\n%s", out)
	}
	// Each is either a plan change (left out) or kept on the subnet
	// manager (untouched: the written spec does not manage QoS here).
	left := map[string]bool{}
	for _, l := range append(res.Report.LeftOut, res.Report.SubnetManager.Untouched...) {
		left[l.Path] = l.Reason != ""
	}
	for _, p := range []string{"partitions/ok/mtu", "partitions/ok/rate", "partitions/ok/sl", "partitions/badkey/pkey", "partitions/zero/pkey",
		"opensm/qos_sl2vl", "opensm/qos_vlarb_low", "opensm/qos_max_vls", "opensm/qos_high_limit", "qos-policy/section/qos-ulps"} {
		if !left[p] {
			t.Errorf("%s is not listed as left out or untouched with a reason: %+v", p, res.Report)
		}
	}
}
