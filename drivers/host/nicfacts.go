package host

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/dcbnl"
)

// NIC facts: what Read learned of a NIC's kernel driver that the change
// list depends on, kept per host as "nic/<n>/<fact>" = value and sent by
// the agent with the state it read (agentproto.Response.Facts), so that
// Changes on the controller plans a remote host as a local read would:
//   - family: mlx5, ice or bnxt (nicfamily.go);
//   - ets: the ETS apply writes for that family and the NIC's state, in
//     dcb's words (prio_tc, tc_tsa, tc_bw);
//   - disruptive/ets, disruptive/app: why an ETS or APP change interrupts
//     traffic on this NIC (ice: every changed write resets the netdev;
//     bnxt: a new TC count closes and reopens the NIC), "" when it does
//     not;
//   - app/writes: the APP entries apply deletes and adds on ice (each a
//     netdev reset).
const (
	factFamily        = "family"
	factETS           = "ets"
	factDisruptiveETS = "disruptive/ets"
	factDisruptiveApp = "disruptive/app"
	factAppWrites     = "app/writes"
)

func factKey(nic, fact string) string { return "nic/" + nic + "/" + fact }

// Facts returns what the last Read of a host learned of its NICs'
// drivers; the agent sends it to the controller with the state it read.
func (d *Driver) Facts(host string) map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.facts[host])
}

// factsOf is a host's facts (nil: none read).
func (d *Driver) factsOf(host string) map[string]string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.facts[host]
}

// etsText is an ETS in dcb's words.
func etsText(e dcbnl.ETS) string {
	return fmt.Sprintf("prio_tc %v tc_tsa %v tc_bw %v", e.PrioTC, e.TCTSA, e.TCTxBW)
}

// nicDCBFacts records the facts of a NIC with DCB.
func nicDCBFacts(facts map[string]string, n *intent.NIC, fam family, ieee *dcbnl.IEEE) {
	facts[factKey(n.Name, factFamily)] = string(fam)
	e := etsFor(n, fam, ieee)
	facts[factKey(n.Name, factETS)] = etsText(e)
	switch fam {
	case famICE:
		why := "ice resets the netdev after every ETS or APP write that changes something (ice_pf_dcb_cfg takes the VSIs down and up, then ice_dcbnl_devreset runs dev_close + dev_open): the link goes down and up once per write, and the kernel flushes its IPv6 addresses (fabctl puts the spec's back)"
		facts[factKey(n.Name, factDisruptiveETS)] = why
		facts[factKey(n.Name, factDisruptiveApp)] = why
		facts[factKey(n.Name, factAppWrites)] = strconv.Itoa(iceAppWrites(ieee, iceApps(n, ieee)))
	case famBNXT:
		if have, want := bnxtNumTC(ieee), bnxtTCCount(e); have != want {
			facts[factKey(n.Name, factDisruptiveETS)] = fmt.Sprintf("the ETS takes bnxt from %d to %d TCs: bnxt_setup_mq_tc closes and reopens the NIC (bnxt_close_nic, bnxt_open_nic) to re-allocate its rings", have, want)
		}
	}
}

// disruptiveFor is why a NIC feature's change interrupts traffic on this
// NIC's driver ("" when it does not beyond the driver's Fields).
func disruptiveFor(facts map[string]string, nic, feat string) string {
	switch feat {
	case "ets":
		return facts[factKey(nic, factDisruptiveETS)]
	case "app":
		return facts[factKey(nic, factDisruptiveApp)]
	}
	return ""
}

// familyFact is the family Read found for a NIC ("" unknown).
func familyFact(facts map[string]string, nic string) family {
	return family(facts[factKey(nic, factFamily)])
}

// etsPayload is the plan's ETS line: the layout Read computed for the
// NIC's driver, or the generic one.
func etsPayload(facts map[string]string, n *intent.NIC) string {
	if v := facts[factKey(n.Name, factETS)]; v != "" {
		return v
	}
	return etsText(desiredETS(n))
}
