package traffic

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// SSHRemote is the Runner's Remote for the hosts of spec s reached over
// SSH: each step goes to the host's agent through the registry's host
// driver (drivers.TrafficRunner), with the same target (address,
// credentials, host-key policy, sudo) plan and apply use. nil when the
// registry's host driver cannot run traffic steps.
func SSHRemote(s *spec.Spec, reg *drivers.Registry, insecure bool) Remote {
	d, err := reg.New(drivers.For(intent.Device{Kind: intent.KindHost}))
	if err != nil {
		return nil
	}
	tr, ok := d.(drivers.TrafficRunner)
	if !ok {
		return nil
	}
	hosts := map[string]*intent.Host{}
	for _, h := range intent.Compile(s).Hosts {
		hosts[h.Name] = h
	}
	popts := plan.Options{Credentials: s.CredentialsByName, Insecure: insecure}
	return func(ctx context.Context, sh *spec.Host, req *SideRequest, ready func(string)) (*SideResult, error) {
		h := hosts[sh.Name]
		if h == nil {
			return nil, fmt.Errorf("host %s is not in the compiled fabric", sh.Name)
		}
		body, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		out, err := tr.Traffic(ctx, plan.Target(plan.Unit{Device: h.Device, Intent: h}, popts), body, func(line string) {
			if a, ok := ParseReady(line); ok {
				ready(a)
			}
		})
		if err != nil {
			return nil, err
		}
		var res SideResult
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, fmt.Errorf("host %s: the agent's traffic result is not valid JSON: %v", sh.Name, err)
		}
		return &res, nil
	}
}
