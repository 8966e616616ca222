package apply

import (
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// SecretValues resolves the secrets the spec's credentials point at
// (spec.SecretRef.Resolve, the one resolver the transports use too), for
// the journal's redactor only: the values never leave this process, and a
// secret that cannot be resolved is skipped (the CLI's check and the
// driver report it). Each value comes with its masks (spec.Masks: a key
// also line by line).
func SecretValues(creds []*spec.Credentials, getenv func(string) string) []string {
	var out []string
	for _, c := range creds {
		for _, s := range c.Secrets() {
			if v, err := s.Ref.Resolve(getenv); err == nil {
				out = append(out, spec.Masks(v)...)
			}
		}
	}
	return out
}

// runCredentials are the credentials whose secrets a run's journal masks:
// the spec's, except those only hosts log in with when the hosts are
// planned and applied with another driver than their own (Plan.HostDriver:
// under --engine kubernetes the cluster reaches them, so their SSH
// credentials are neither needed nor read).
func runCredentials(o RunOptions) []*spec.Credentials {
	if o.Spec == nil {
		return nil
	}
	if o.Plan.HostDriver == "" || o.Fabric == nil {
		return o.Spec.Credentials
	}
	hostOnly := map[string]bool{}
	for _, u := range plan.Units(o.Fabric) {
		n := u.Device.Credentials
		if n == "" {
			continue
		}
		if _, seen := hostOnly[n]; !seen || u.Device.Kind != intent.KindHost {
			hostOnly[n] = u.Device.Kind == intent.KindHost
		}
	}
	var out []*spec.Credentials
	for _, c := range o.Spec.Credentials {
		if c == nil || !hostOnly[c.Name] {
			out = append(out, c)
		}
	}
	return out
}
