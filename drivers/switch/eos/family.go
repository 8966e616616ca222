package eos

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
)

// Transmit-queue keywords by chip family. EOS configures an egress queue
// in a sub-mode whose keyword depends on the switch's chip:
//
//   - Sand (Broadcom Jericho/Qumran, the R-series): `tx-queue 0-7`. Arista
//     TOI "tx-queue 7 configurability" (arista.com/support/toi/tag/voq):
//     "Sand platform switches have eight queues, 0 through 7, and all
//     queues are exposed through the CLI" (testdata/vendor/eos/platform-families.txt:20-23).
//   - Strata (Broadcom Trident/Tomahawk) and vEOS: a unicast and a
//     multicast queue set, `uc-tx-queue 0-7` and `mc-tx-queue 0-3`: Arista's
//     goeapi keeps a real `show running-config all` of vEOS EOS-4.13.7M
//     listing them (platform-families.txt:27-38); on Strata hardware the
//     same form is what RoCE configurations of DCS-7060DX4-32 and
//     DCS-7060PX5-64E-F use (audit E4; third-party, named as such). AVD
//     renders both sub-modes with the same lines (avd-uc-tx-queue.txt).
//
// Which chip a model has: sonic-utilities' GCU ASIC table
// (gcu_field_operation_validators.conf.json, the Arista HWSKUs) and
// sonic-mgmt's pfc_storm.py, which reads an EOS switch's chip from the
// first line of `show version` (platform-families.txt:2-19). A model in
// neither is not guessed: its queue settings are not expressible
// (Unexpressible) and the plan says why.

// FactModel is the device fact (drivers.PathFacts) holding the model the
// first line of `show version` names ("DCS-7060X6-64PE-F", "vEOS").
const FactModel = drivers.PathFacts + "model"

// showVersion is the model read: its first line is "Arista <model>"
// (goeapi testdata/fixtures/show_version.text l.1, "Arista vEOS";
// sonic-mgmt pfc_storm.py reads the chip from that line).
const showVersion = "show version"

// Queue keywords.
const (
	QueueSand   = "tx-queue"
	QueueStrata = "uc-tx-queue"
)

// Family is a chip family as fabctl renders for it.
type Family struct {
	Chip  string // "Tomahawk5", "Jericho2", "vEOS"
	Queue string // QueueSand or QueueStrata
}

// families maps a model prefix (without "DCS-"/"Arista-") to its chip,
// longest prefix first where two overlap (7800R3A before 7800R3).
var families = []struct {
	prefix string
	Family
}{
	// Strata: sonic-mgmt pfc_storm.py l.17-39 and GCU's Broadcom table
	// (th, th2, th5, td2, td3: drivers/switch/sonic/gcu.go gcuBroadcomSKUs).
	{"7060X6", Family{"Tomahawk5", QueueStrata}},
	{"7060DX5", Family{"Tomahawk4", QueueStrata}},
	{"7060PX5", Family{"Tomahawk4", QueueStrata}},
	{"7060CX", Family{"Tomahawk", QueueStrata}},
	{"7260CX3", Family{"Tomahawk2", QueueStrata}},
	{"7260QX3", Family{"Tomahawk2", QueueStrata}},
	{"7050CX3", Family{"Trident3", QueueStrata}},
	{"7050QX", Family{"Trident2", QueueStrata}},
	{"7050-QX", Family{"Trident2", QueueStrata}},
	// Sand: GCU's Broadcom table (jr2, j2c+, q3d).
	{"7800R3A", Family{"Jericho2C+", QueueSand}},
	{"7800R3", Family{"Jericho2", QueueSand}},
	{"7808R3A", Family{"Jericho2", QueueSand}},
	{"7280R4", Family{"Qumran3D", QueueSand}},
	// vEOS prints uc-tx-queue/mc-tx-queue (platform-families.txt:27-38).
	{"vEOS", Family{"vEOS", QueueStrata}},
}

// modelStrip are the prefixes a model name may carry before the family
// prefix: EOS's "DCS-" (show version), SONiC's "Arista-" (HWSKU).
var modelStrip = []string{"DCS-", "Arista-"}

// modelPrefixes lists the model prefixes of the table (the PR gate's
// spec.PlatformLimits.ModelPrefixes).
func modelPrefixes() []string {
	out := make([]string, len(families))
	for i, f := range families {
		out[i] = f.prefix
	}
	return out
}

// FamilyOf returns the chip family of an EOS model, and whether a source
// names it.
func FamilyOf(model string) (Family, bool) {
	m := strings.TrimSpace(model)
	for _, p := range modelStrip {
		m = strings.TrimPrefix(m, p)
	}
	for _, f := range families {
		if strings.HasPrefix(m, f.prefix) {
			return f.Family, true
		}
	}
	return Family{}, false
}

// ParseModel returns the model `show version` names on its first
// non-empty line ("Arista DCS-7060X6-64PE-F" -> "DCS-7060X6-64PE-F"), ""
// when that line is not of that form.
func ParseModel(out string) string {
	for _, l := range strings.Split(strings.ReplaceAll(out, "\r", ""), "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		f := strings.Fields(l)
		if len(f) == 2 && f[0] == "Arista" && validModel(f[1]) {
			return f[1]
		}
		return ""
	}
	return ""
}

// validModel: a model name is letters, digits and dashes (it is shown in
// plans and errors, so nothing else passes).
func validModel(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '+' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// liveFamily is the family a render for sw uses: the model a Read
// recorded (Target.Live), else the model the spec names. ok is false
// when that model is missing from the table (or the read found none),
// known false when neither a read nor the spec names a model (an
// offline render of a spec without one: Sand's tx-queue).
func liveFamily(live intent.State, sw *intent.Switch) (f Family, model string, ok, known bool) {
	switch {
	case live != nil:
		model = live[FactModel]
	case sw != nil && sw.Model != "":
		model = sw.Model
	default:
		return Family{Queue: QueueSand}, "", true, false
	}
	f, ok = FamilyOf(model)
	return f, model, ok, true
}

// checkModel compares the model the spec names with the one the switch
// reports: a different chip family renders another queue keyword, so
// the plan stops rather than render for the wrong one.
func checkModel(sw *intent.Switch, live intent.State) error {
	if sw == nil || sw.Model == "" || live == nil || live[FactModel] == "" {
		return nil
	}
	want, okw := FamilyOf(sw.Model)
	got, okg := FamilyOf(live[FactModel])
	if okw && okg && want.Queue != got.Queue {
		return fmt.Errorf("the spec says model %s (%s, %s) but the switch reports %s (%s, %s): fix the switch's model attribute",
			sw.Model, want.Chip, want.Queue, live[FactModel], got.Chip, got.Queue)
	}
	return nil
}

// queuePaths are the state paths a transmit-queue sub-mode carries.
func queuePath(k string) bool {
	if !strings.HasPrefix(k, "tc/") {
		return false
	}
	rest := k[strings.Index(k[3:], "/")+4:]
	return rest == "sched" || rest == "bandwidth" || strings.HasPrefix(rest, "ecn/")
}

// unknownModelReason says why queue settings are not expressible.
func unknownModelReason(model string) string {
	if model == "" {
		return "the switch's `show version` names no Arista model: EOS's transmit-queue keyword depends on the chip (tx-queue on Sand, uc-tx-queue on Strata) and fabctl does not guess it"
	}
	return "EOS model " + model + " is in no sourced platform table: its transmit-queue keyword depends on the chip (tx-queue on Sand, uc-tx-queue on Strata) and fabctl does not guess it"
}
