package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/traffic"
)

// trafficRunner is what the host driver offers to run traffic steps on
// hosts reached over SSH (drivers/host.Driver.Traffic).
type trafficRunner interface {
	Traffic(ctx context.Context, t drivers.Target, body json.RawMessage, onLine func(string)) (json.RawMessage, error)
}

// sshTraffic is the traffic stage's Remote: each step goes to the host's
// agent over SSH with the same target (address, credentials, host-key
// policy, sudo) plan and apply use. nil when the registry's host driver
// cannot run traffic steps.
func sshTraffic(s *spec.Spec, reg *drivers.Registry, insecure bool) traffic.Remote {
	d, err := reg.New(drivers.For(intent.Device{Kind: intent.KindHost}))
	if err != nil {
		return nil
	}
	tr, ok := d.(trafficRunner)
	if !ok {
		return nil
	}
	hosts := map[string]*intent.Host{}
	for _, h := range intent.Compile(s).Hosts {
		hosts[h.Name] = h
	}
	popts := plan.Options{Credentials: s.CredentialsByName, Insecure: insecure}
	return func(ctx context.Context, sh *spec.Host, req *traffic.SideRequest, ready func(string)) (*traffic.SideResult, error) {
		h := hosts[sh.Name]
		if h == nil {
			return nil, fmt.Errorf("host %s is not in the compiled fabric", sh.Name)
		}
		body, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		out, err := tr.Traffic(ctx, plan.Target(plan.Unit{Device: h.Device, Intent: h}, popts), body, func(line string) {
			if a, ok := traffic.ParseReady(line); ok {
				ready(a)
			}
		})
		if err != nil {
			return nil, err
		}
		var res traffic.SideResult
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("host %s: the agent's traffic result is not valid JSON: %v", sh.Name, err)
		}
		return &res, nil
	}
}
