package nxos

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// Cisco Silicon One (issue 31, item 3: "NX-OS Silicon One where no
// source exists: not expressible, not guessed").
//
// Every NX-OS QoS form fabctl renders (network-qos, queuing and qos
// policies, interface priority-flow-control, the watchdog) is sourced
// from Cisco material for the Cloud Scale Nexus 9000 (cisco-roce-enable.cfg,
// cisco-pfc-guide.txt, cisco-cmdref-qos.txt). The Nexus 9800 series runs
// another ASIC, Cisco Silicon One Q200 (Cisco's Nexus 9800 white paper,
// testdata/vendor/nxos/cisco-9800-silicon-one.txt), and no vendor text
// reached shows its QoS forms. On such a switch those settings are not
// expressible: plan lists them with silicOneReason and renders none.
// Only the interface MTU, generic NX-OS, stays.
//
// The model is read from `show version | json`'s chassis_id (NAPALM's
// get_facts reads the model there; napalm-show-version.json), else taken
// from the spec's model attribute for an offline render.

// FactModel is the device fact holding the chassis `show version` names
// ("NX-OSv Chassis", "Nexus9000 C93180YC-FX Chassis").
const FactModel = drivers.PathFacts + "model"

// showVersion is the model read (napalm-show-version.json).
const showVersion = "show version | json"

// silicOne98 matches a Nexus 9800 series model number in a chassis name
// or a spec model: "C9808", "N9K-C9804", "Nexus9000 C9808 Chassis", "9808".
var silicOne98 = regexp.MustCompile(`(^|[^0-9A-Za-z])(N9K-)?C?98[0-9]{2}([^0-9]|$)`)

// SiliconOne reports whether the model is a Nexus 9800 series switch
// (Cisco Silicon One Q200).
func SiliconOne(model string) bool { return silicOne98.MatchString(model) }

// ParseChassis returns the chassis_id of `show version | json`, checked
// (it is shown in plans and errors): printable ASCII, at most 80 bytes.
func ParseChassis(out string) (string, error) {
	var v struct {
		Chassis *string `json:"chassis_id"`
	}
	body := strings.TrimSpace(out)
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return "", fmt.Errorf("%s: not the JSON NX-OS prints: %v", showVersion, err)
	}
	if v.Chassis == nil {
		return "", fmt.Errorf("%s: no chassis_id", showVersion)
	}
	c := strings.TrimSpace(*v.Chassis)
	if len(c) > 80 {
		return "", fmt.Errorf("%s: chassis_id longer than 80 bytes", showVersion)
	}
	for _, r := range c {
		if r < 0x20 || r > 0x7e {
			return "", fmt.Errorf("%s: chassis_id %q holds a character outside printable ASCII", showVersion, c)
		}
	}
	return c, nil
}

// modelOf is the model a render uses: the one a Read recorded, else the
// spec's.
func modelOf(live intent.State, sw *intent.Switch) string {
	if m := live[FactModel]; m != "" {
		return m
	}
	if sw != nil {
		return sw.Model
	}
	return ""
}

func silicOneReason(model string) string {
	return "the switch is a Nexus 9800 (" + model + "), which runs Cisco Silicon One Q200 (Cisco's Nexus 9800 white paper); no Cisco source shows NX-OS QoS, PFC or watchdog forms on Silicon One, so fabctl renders none there rather than guess the Cloud Scale forms"
}

// silicOneUnexpressible lists every desired setting but the interface
// MTU when the switch is a Nexus 9800.
func silicOneUnexpressible(live intent.State, sw *intent.Switch, desired intent.State) map[string]string {
	model := modelOf(live, sw)
	if !SiliconOne(model) {
		return nil
	}
	out := map[string]string{}
	for k := range desired {
		if strings.HasPrefix(k, drivers.PathFacts) || strings.HasPrefix(k, "port/") && strings.HasSuffix(k, "/mtu") {
			continue
		}
		out[k] = silicOneReason(model)
	}
	return out
}
