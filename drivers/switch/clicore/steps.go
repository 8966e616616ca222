package clicore

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	sshtransport "github.com/fabctl/fabctl/drivers/transport/ssh"
	"github.com/fabctl/fabctl/intent"
)

// StepError names the step of a device transaction that failed
// ("checkpoint", "line 12 of 35 in session ...", "commit").
type StepError struct {
	Device, Step string
	Err          error
}

func (e *StepError) Error() string {
	// An SSH transport error already names the device and the command:
	// keep only its kind and cause after the step.
	var se *sshtransport.Error
	if errors.As(e.Err, &se) && se.Device == e.Device {
		s := fmt.Sprintf("%s: %s: %s", e.Device, e.Step, se.Kind)
		switch {
		case se.Kind == sshtransport.KindClosed:
			s += ": the connection dropped before the switch answered"
		case se.Detail != "":
			s += ": " + se.Detail
		}
		return s
	}
	return fmt.Sprintf("%s: %s: %v", e.Device, e.Step, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// IsConnLoss reports whether err means the session is gone (closed or
// timed out), so the transaction's state on the device is unknown until
// a new session looks.
func IsConnLoss(err error) bool {
	var e *sshtransport.Error
	return errors.As(err, &e) && (e.Kind == sshtransport.KindClosed || e.Kind == sshtransport.KindTimeout)
}

// Group is one native step's share of a diff: the paths whose step key
// is Key, and the first disruptive note among their fields.
type Group struct {
	Key        string
	Paths      []string
	Disruptive string
}

// GroupDiff groups a diff's paths by key (a path whose key is "" is left
// out), the groups in the order the diff first names them, then stably
// by rank.
func GroupDiff(diff []intent.AttrChange, fields []intent.Field, key func(path string) string, rank func(key string) int) []*Group {
	var out []*Group
	groups := map[string]*Group{}
	for _, c := range diff {
		k := key(c.Path)
		if k == "" {
			continue
		}
		g := groups[k]
		if g == nil {
			g = &Group{Key: k}
			groups[k] = g
			out = append(out, g)
		}
		g.Paths = append(g.Paths, c.Path)
		if f, ok := intent.FieldFor(fields, c.Path); ok && f.Disruptive != "" && g.Disruptive == "" {
			g.Disruptive = f.Disruptive
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i].Key) < rank(out[j].Key) })
	return out
}

// SplitPort splits "port/Ethernet1/1/mtu" into "Ethernet1/1" and "mtu".
func SplitPort(path string) (string, string) {
	rest := strings.TrimPrefix(path, "port/")
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return rest, ""
	}
	return rest[:i], rest[i+1:]
}

// Sections turns a diff into steps for platforms that render whole
// sections: the diff's paths are grouped (GroupDiff with key and rank),
// and each group becomes one step whose payload is the sections add is
// given for its paths, each section rendered once, in the first step
// that needs it (a diff names the same section for many paths: 64
// dscp/* paths on a new switch). A step's summary is its key with the
// number of settings.
func Sections(diff []intent.AttrChange, fields []intent.Field, key func(path string) string, rank func(key string) int,
	each func(path string, add func(section string, lines func() []string))) []drivers.Change {
	done := map[string]bool{}
	var out []drivers.Change
	for _, g := range GroupDiff(diff, fields, key, rank) {
		var payload []string
		add := func(section string, lines func() []string) {
			if !done[section] {
				done[section] = true
				payload = append(payload, lines()...)
			}
		}
		for _, p := range g.Paths {
			each(p, add)
		}
		out = append(out, drivers.Change{Paths: g.Paths, Summary: fmt.Sprintf("%s (%d setting(s))", g.Key, len(g.Paths)),
			Payload: payload, Disruptive: g.Disruptive})
	}
	return out
}
