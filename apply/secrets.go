package apply

import (
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
