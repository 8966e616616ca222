package host

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
)

// TestFamilyMatrix plans an Intel E810 (ice) and a Broadcom (bnxt) NIC
// for RoCEv1 and RoCEv2 with PCP and DSCP trust and IPv6-only, dual-stack
// and IPv4 addresses, from the DCB state each driver has at load, and
// checks what each driver's source requires of the plan: ice's TCs
// contiguous outside DSCP mode (ice_dcb_get_num_tc) and its DSCP entries
// below its TC count and off its default map; bnxt's ETS through
// bnxt_ets_validate at max_tc 3 with the RoCE APP entry of the RoCE
// version; rdma_cm's SL by the NIC's prio->TC map; the NCCL address
// family and RoCE version for NCCL's own GID choice; and the steps the
// plan renders (disruptive on ice, the layout the driver gets).
func TestFamilyMatrix(t *testing.T) {
	spec := func(transport, trust, addrs string) string {
		dscp := ""
		if trust == "dscp" {
			dscp = "dscp = [26]"
		}
		return `
fabric "t" {
  transport          = "` + transport + `"
  trust              = "` + trust + `"
  congestion_control = "pfc-only"
  rdma_tos           = 24
}
class "roce" {
  role      = "rdma"
  priority  = 3
  lossless  = true
  bandwidth = 60
  ` + dscp + `
}
class "bulk" {
  priority  = 0
  default   = true
  bandwidth = 40
}
host "h1" {
  connect       = "local"
  nccl_env_file = "/nonexistent/nccl.conf"
  nic "e0" {
    device    = "rdma0"
    addresses = [` + addrs + `]
    vlan      = 100
  }
}
`
	}
	for _, fam := range []family{famICE, famBNXT} {
		for _, transport := range []string{"rocev1", "rocev2"} {
			for _, trust := range []string{"pcp", "dscp"} {
				if transport == "rocev1" && trust == "dscp" {
					continue // RoCEv1 has no IP header (lint QOS-2)
				}
				for _, addrs := range []string{`"fd00::1/64"`, `"fd00::1/64", "198.18.0.1/24"`, `"198.18.0.1/24"`} {
					name := fmt.Sprintf("%s/%s/%s/%s", fam, transport, trust, addrs)
					_, f := loadSpec(t, spec(transport, trust, addrs))
					h := f.Hosts[0]
					n := &h.NICs[0]
					cur := &dcbnl.IEEE{ETS: &dcbnl.ETS{ETSCap: 8}, PFC: &dcbnl.PFC{Cap: 8}}
					if fam == famBNXT {
						cur.ETS.ETSCap, cur.PFC.Cap = 3, 2
					}
					e := etsFor(n, fam, cur)
					unsup := map[string]string{}
					switch fam {
					case famICE:
						if trust == "pcp" {
							used := map[uint8]bool{}
							for _, tc := range e.PrioTC {
								used[tc] = true
							}
							for tc := uint8(0); tc < uint8(len(used)); tc++ {
								if !used[tc] {
									t.Errorf("%s: ice TCs not contiguous: %s", name, etsText(e))
								}
							}
						}
						iceAppLimits(n, cur, unsup)
						for _, a := range iceApps(n, cur) {
							if a.Priority >= 8 || a.Selector != dcbnl.SelDSCP {
								t.Errorf("%s: ice APP entry %+v", name, a)
							}
						}
					case famBNXT:
						if err := bnxtETSValidate(e, 3, true); err != nil {
							t.Errorf("%s: bnxt_ets_validate: %v (%s)", name, err, etsText(e))
						}
						bnxtLimits(n, cur, unsup)
						want := dcbnl.App{Selector: dcbnl.SelUDP, Protocol: 4791, Priority: 3}
						if transport == "rocev1" {
							want = dcbnl.App{Selector: dcbnl.SelEthertype, Protocol: 0x8915, Priority: 3}
						}
						apps := desiredAppsFor(n, fam)
						if len(apps) == 0 || apps[len(apps)-1] != want {
							t.Errorf("%s: bnxt RoCE APP entry %+v, want %+v", name, apps, want)
						}
					}
					if len(unsup) != 0 {
						t.Errorf("%s: not expressible: %v", name, unsup)
					}
					// rdma_cm: ToS 24 is skb priority 4, no class's: ice puts it on
					// TC 0 in VLAN mode, on TC 4 in DSCP mode; bnxt on TC 0.
					wantSL := 0
					if fam == famICE && trust == "dscp" {
						wantSL = 4
					}
					if sl, via := n.CMSL(string(fam)); sl != wantSL || via != intent.CMViaPrioTC {
						t.Errorf("%s: rdma_cm SL %d via %s, want %d from the prio->TC map", name, sl, via, wantSL)
					}
					if cmFinding(n, fam) == nil {
						t.Errorf("%s: no finding for rdma_cm's SL %d on the RDMA class's priority 3", name, wantSL)
					}
					v6only := !strings.Contains(addrs, "198.18")
					if (h.NCCL["NCCL_IB_ADDR_FAMILY"] == "AF_INET6") != v6only || (h.NCCL["NCCL_IB_ROCE_VERSION_NUM"] == "1") != (transport == "rocev1") {
						t.Errorf("%s: NCCL env %v", name, h.NCCL)
					}
					// The steps the plan renders for this NIC.
					d := New().(*Driver)
					d.facts["h1"] = map[string]string{}
					nicDCBFacts(d.facts["h1"], n, fam, cur)
					chs, err := d.Changes(drivers.Target{Device: h.Device, Intent: h}, []intent.AttrChange{
						{Path: "nic/e0/tc/3/bandwidth", Action: intent.Update, Before: "50", After: "60"},
						{Path: "nic/e0/pfc", Action: intent.Update, Before: "", After: "3"},
					}, nil)
					if err != nil || len(chs) != 2 {
						t.Fatalf("%s: changes %+v %v", name, chs, err)
					}
					if !strings.Contains(chs[0].Payload[0], etsText(e)) {
						t.Errorf("%s: ETS step %q, want the layout %s", name, chs[0].Payload[0], etsText(e))
					}
					if fam == famICE && chs[0].Disruptive == "" {
						t.Errorf("%s: the ice ETS step is not disruptive", name)
					}
				}
			}
		}
	}
}
