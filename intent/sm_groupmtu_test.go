package intent

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/spec"
)

// TestPartitionDefaultGroupMTU: a partition's mtu = 0 writes no mtu= (and
// no QoS level mtu-limit), so opensm's default group MTU applies, and a
// member port is expected to carry that default (2048); a negative mtu
// is still a load error.
func TestPartitionDefaultGroupMTU(t *testing.T) {
	// rdma_mtu 1024: the default partition's group (at rdma_mtu) is
	// smaller than opensm's default, so the port's MTU is compute's.
	src := strings.Replace(ibSmall, "    ipoib           = true\n", "    ipoib           = true\n    mtu             = 0\n", 1)
	src = strings.Replace(src, "rdma_mtu  = 2048", "rdma_mtu  = 1024", 1)
	f := compile(t, src)
	st := f.SubnetManagers[0].Flatten()
	for _, k := range []string{"partitions/compute/mtu", "qos-policy/level/partition-compute/mtu-limit"} {
		if v, ok := st[k]; ok {
			t.Errorf("%s = %q for mtu = 0, want none (opensm's default)", k, v)
		}
	}
	if st["partitions/compute/pkey"] != "0x0001" {
		t.Fatalf("the partition is not compiled: %v", st)
	}
	for _, h := range f.Hosts {
		if h.Name == "cn2" && (h.NICs[0].IB == nil || h.NICs[0].IB.MTU != spec.OpenSMDefaultGroupMTU) {
			t.Errorf("cn2:ib0 expects group MTU %+v, want opensm's default %d", h.NICs[0].IB, spec.OpenSMDefaultGroupMTU)
		}
	}
	_, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(strings.Replace(src, "mtu             = 0", "mtu             = -1", 1))}}, spec.LoadOptions{})
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "mtu = -1 is outside 0..4096") {
		t.Errorf("mtu = -1: %v", diags)
	}
}
