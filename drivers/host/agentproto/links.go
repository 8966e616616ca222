package agentproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fabctl/fabctl/internal/linktruth"
)

// Bounds of an OpLinks answer. The agent is the controller's own build,
// but what comes back over SSH is still input: a report larger than
// these is not a host's link report.
const (
	// MaxLinks bounds the JSON of Response.Links: a host's report is a
	// few hundred bytes per NIC.
	MaxLinks = 1 << 20
	// maxNeighbors bounds the LLDP neighbours of one port (a cable has
	// one far end; a hub or a bridge in between a few).
	maxNeighbors = 256
	// maxTLV bounds a neighbour's strings: IEEE 802.1AB-2016 8.5.2,
	// 8.5.3 and 8.5.6 give the chassis ID, port ID and system name TLVs
	// at most 255 octets of information string.
	maxTLV = 255
	// maxText bounds the report's own sentences (sources, notes, FEC).
	maxText = 4096
	// maxSpeedMbps is 10 Tb/s: no Ethernet port runs faster.
	maxSpeedMbps = 10_000_000
)

// DecodeLinks reads and checks an OpLinks answer for a host whose spec
// NICs are nics: only those ports, each under its own name, with a
// state, speed and neighbours a link report can have. Errors say what is
// wrong; the caller names the host.
func DecodeLinks(raw json.RawMessage, nics []string) (*linktruth.DeviceLinks, error) {
	if len(raw) > MaxLinks {
		return nil, fmt.Errorf("the link report is larger than %d KiB", MaxLinks>>10)
	}
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, errors.New("the answer has no link report")
	}
	var dl linktruth.DeviceLinks
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&dl); err != nil {
		return nil, fmt.Errorf("the link report is not valid: %s", jsonErr(raw, err))
	}
	if dec.More() {
		return nil, errors.New("the link report has trailing data")
	}
	if dl.Ports == nil {
		return nil, errors.New(`the link report has no "ports"`)
	}
	known := make(map[string]bool, len(nics))
	for _, n := range nics {
		known[n] = true
	}
	for name, o := range dl.Ports {
		if !known[name] {
			return nil, fmt.Errorf("the link report names port %q, which is not a NIC of the host's spec", clip(name))
		}
		if err := checkObservation(name, o); err != nil {
			return nil, fmt.Errorf("the link report's port %s: %w", name, err)
		}
	}
	for name, id := range dl.PortIDs {
		if !known[name] || len(id) > maxTLV {
			return nil, fmt.Errorf("the link report advertises Port ID %q for %q, not a NIC of the host's spec or longer than a TLV", clip(id), clip(name))
		}
	}
	for _, s := range []string{dl.Source, dl.LLDPSource, dl.LLDPNote} {
		if len(s) > maxText {
			return nil, fmt.Errorf("the link report has a text of %d bytes (at most %d)", len(s), maxText)
		}
	}
	return &dl, nil
}

func checkObservation(name string, o *linktruth.Observation) error {
	switch {
	case o == nil:
		return errors.New("null observation")
	case o.Port != name:
		return fmt.Errorf("filed under another port name (%q)", clip(o.Port))
	case o.Oper != "" && o.Oper != linktruth.Up && o.Oper != linktruth.Down:
		return fmt.Errorf("oper state %q (want up, down or none)", clip(o.Oper))
	case o.SpeedMbps < 0 || o.SpeedMbps > maxSpeedMbps:
		return fmt.Errorf("speed %d Mb/s", o.SpeedMbps)
	case len(o.FEC) > maxText:
		return fmt.Errorf("a FEC of %d bytes", len(o.FEC))
	case len(o.Neighbors) > maxNeighbors:
		return fmt.Errorf("%d LLDP neighbours (at most %d)", len(o.Neighbors), maxNeighbors)
	}
	for _, n := range o.Neighbors {
		for _, s := range []string{n.SystemName, n.PortID, n.PortIDSubtype, n.PortDesc, n.ChassisID} {
			if len(s) > maxTLV {
				return fmt.Errorf("an LLDP neighbour string of %d bytes (a TLV holds at most %d)", len(s), maxTLV)
			}
		}
	}
	return nil
}

// clip shortens a hostile name for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
