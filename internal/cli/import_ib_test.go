package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// importIBInventory is an InfiniBand inventory: the subnet manager on
// this machine (sm_connect = "local") with its opensm.conf in a
// directory of the test, two compute hosts with their port GUIDs, no
// partitions and no QoS.
const importIBInventory = `fabric "ib" {
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
    guid   = "0x0c42a10300000101"
  }
}

host "cn01" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0c42a10300000b01"
  }
}

host "cn02" {
  connect = "none"
  nic "ib0" {
    device = "mlx5_0"
    guid   = "0x0c42a10300000c01"
  }
}

infiniband {
  subnet_manager  = "sm01"
  sm_connect      = "local"
  opensm_conf     = %q
  opensm_pid_file = %q
}
`

// TestImportSubnetManagerCommand: fabctl import of an InfiniBand
// inventory whose subnet manager runs hand-written opensm files (a
// partition with a port the inventory does not name, QoS on with an
// SL2VL and a VL arbitration table): the --json report's subnet_manager
// names what was read, left_out names the unknown port, the human
// report says both, the written spec leaves that member unmanaged, and
// plan of it has no changes and lists that one member as unmanaged.
func TestImportSubnetManagerCommand(t *testing.T) {
	root := t.TempDir()
	etc := filepath.Join(root, "sm", "etc")
	writeFile(t, filepath.Join(etc, "opensm.conf"), fmt.Sprintf(`# opensm.conf of the lab
partition_config_file %s
qos_policy_file %s
sweep_interval 10
qos TRUE
qos_sl2vl 0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0
qos_vlarb_low 0:64,1:128
`, filepath.Join(etc, "partitions.conf"), filepath.Join(etc, "qos-policy.conf")))
	writeFile(t, filepath.Join(etc, "partitions.conf"), `# typed by hand
Default=0x7fff, ipoib, mtu=4 : ALL=full ;
compute = 0x8001, ipoib, mtu=4, sl=1 :
	0x0c42a10300000b01=full,  # cn01
	0xc42a10300000c01,        # cn02, limited
	0x0c42a1030000ff01=full ; # a port nobody remembers
`)
	writeFile(t, filepath.Join(etc, "qos-policy.conf"), `qos-levels
  qos-level
    name: DEFAULT
    sl: 0
  end-qos-level
  qos-level
    name: partition-compute
    sl: 1
    mtu-limit: 4
    pkey: 0x0001
  end-qos-level
end-qos-levels
qos-match-rules
  qos-match-rule
    pkey: 0x1
    qos-level-name: partition-compute
  end-qos-match-rule
end-qos-match-rules
`)
	inv := fmt.Sprintf(importIBInventory, filepath.Join(etc, "opensm.conf"), filepath.Join(root, "sm", "opensm.pid"))
	writeFile(t, filepath.Join(root, "inventory", "ib.fab.hcl"), inv)
	written := filepath.Join(root, "out", "ib.fab.hcl")
	if err := os.MkdirAll(filepath.Dir(written), 0o755); err != nil {
		t.Fatal(err)
	}

	f, _, out, errOut := testFactory()
	if code := runCLI(f, "import", "--json", "-o", written, filepath.Join(root, "inventory")); code != ExitOK {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	var doc struct {
		SubnetManager struct {
			Device     string `json:"device"`
			QoS        bool   `json:"qos"`
			Partitions []struct {
				Name, PKey, Written string
				Members, Named      int
			} `json:"partitions"`
			Written []string `json:"written"`
		} `json:"subnet_manager"`
		LeftOut []struct{ Device, Path, Live, Reason string } `json:"left_out"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("import --json: %v\n%s", err, out)
	}
	sm := doc.SubnetManager
	if sm.Device != "sm.sm01" || !sm.QoS || len(sm.Partitions) != 2 || strings.Join(sm.Written, ",") != "sl2vl,vl_arb_low" {
		t.Errorf("subnet_manager: %+v\n%s", sm, out)
	}
	for _, p := range sm.Partitions {
		if p.Name == "compute" && (p.PKey != "0x0001" || p.Members != 3 || p.Named != 2 || p.Written != "partition") ||
			p.Name == "Default" && p.Written != "implicit" {
			t.Errorf("partition %+v", p)
		}
	}
	if len(doc.LeftOut) != 1 || doc.LeftOut[0].Device != "sm.sm01" || doc.LeftOut[0].Path != "partitions/compute/member/0x0c42a1030000ff01" ||
		!strings.Contains(doc.LeftOut[0].Reason, "no NIC of the inventory has port GUID") {
		t.Errorf("left_out: %+v", doc.LeftOut)
	}
	src, err := os.ReadFile(written)
	if err != nil {
		t.Fatal(err)
	}
	// The GUID no NIC has is never a member: the spec leaves it
	// unmanaged, as opensm runs it.
	if !strings.Contains(string(src), `limited_members = ["cn02:ib0"]`) || strings.Count(string(src), "ff01") != 2 ||
		!strings.Contains(string(src), `"partitions/compute/member/0x0c42a1030000ff01" = "imported: no NIC of the inventory has port GUID`) {
		t.Errorf("the written spec:\n%s", src)
	}

	// Formatted as fabctl fmt formats.
	f, _, out, errOut = testFactory()
	if code := runCLI(f, "fmt", "--check", written); code != ExitOK {
		t.Errorf("fmt --check of the written spec: exit %d\n%s\n%s\n%s", code, out, errOut, src)
	}

	// The human report, the spec on stdout.
	f, _, out, errOut = testFactory()
	if code := runCLI(f, "import", filepath.Join(root, "inventory")); code != ExitOK ||
		!strings.Contains(errOut.String(), `partition "compute" (P_Key 0x0001): 3 members, 2 named by the inventory: written`) ||
		!strings.Contains(errOut.String(), "sm.sm01 partitions/compute/member/0x0c42a1030000ff01: device full, spec (none)") {
		t.Errorf("import: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	// Plan of the written spec: no changes (exit 0 with
	// --detailed-exitcode), the member import left out listed as
	// unmanaged.
	f, _, out, errOut = testFactory()
	code := runCLI(f, "plan", "--json", "--detailed-exitcode", filepath.Join(root, "out"))
	var p struct {
		Devices []struct {
			Address   string
			Changes   []struct{ Path, Action string }
			Unmanaged []struct{ Path, Live string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &p); err != nil || code != ExitOK || len(p.Devices) != 1 || len(p.Devices[0].Changes) != 0 ||
		len(p.Devices[0].Unmanaged) != 1 || p.Devices[0].Unmanaged[0].Path != "partitions/compute/member/0x0c42a1030000ff01" || p.Devices[0].Unmanaged[0].Live != "full" {
		t.Errorf("plan of the imported spec: exit %d (want %d, the member import left out unmanaged): %v\n%s\n%s", code, ExitOK, err, out, errOut)
	}
}
