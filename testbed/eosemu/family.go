package eosemu

import "strings"

// The models the emulator can be, with the transmit-queue keyword of
// their chip family (drivers/switch/eos/family.go cites the sources: the
// Arista TOI for Sand's `tx-queue`, Arista's vEOS `show running-config
// all` for `uc-tx-queue`, sonic-utilities' and sonic-mgmt's model
// tables for which chip a model has). A model outside this list is
// refused at Start rather than given a guessed family.
// Models are matched by family prefix after "DCS-" (DCS-7060X6-64PE-F is
// a 7060X6).
var models = []struct{ prefix, queue string }{
	{"7280R4", "tx-queue"},     // Qumran3D (Sand)
	{"7800R3", "tx-queue"},     // Jericho2, Jericho2C+ (Sand)
	{"7060X6", "uc-tx-queue"},  // Tomahawk5 (Strata)
	{"7050CX3", "uc-tx-queue"}, // Trident3 (Strata)
	{"vEOS", "uc-tx-queue"},
}

// DefaultModel is the model an emulator without Options.Model is: a Sand
// switch, whose `tx-queue` the driver renders for it.
const DefaultModel = "DCS-7280R4-32QF-32DF-64O"

func familyOf(model string) (string, bool) {
	m := strings.TrimPrefix(model, "DCS-")
	for _, f := range models {
		if strings.HasPrefix(m, f.prefix) {
			return f.queue, true
		}
	}
	return "", false
}

// showVersion is `show version` in the layout of Arista's goeapi fixture
// (testdata/vendor/eos/goeapi-show-version.txt): "Arista <model>" first,
// then the hardware and software lines. The serial number and MAC address
// are the emulator's own.
func showVersion(model string) string {
	return strings.Join([]string{
		"Arista " + model,
		"Hardware version:    11.00",
		"Serial number:       FAB0000000",
		"System MAC address:  001c.7300.0001",
		"",
		"Software image version: 4.32.2F",
		"Architecture:           x86_64",
		"Internal build version: 4.32.2F-0.fabctl",
		"",
		"Uptime:                 5 minutes",
		"Total memory:           8099732 kB",
		"Free memory:            5229468 kB",
		"",
	}, "\n") + "\n"
}
