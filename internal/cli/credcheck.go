package cli

import (
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// checkSecrets is plan.CheckSecrets with the factory's environment: one
// error naming each secret the selected devices log in with that cannot
// be resolved, before any device is contacted (tests that bring their own
// drivers skip it: Factory.SkipSecretCheck).
func checkSecrets(f *Factory, s *spec.Spec, fab *intent.Fabric, targets, excludes []string) error {
	if f.SkipSecretCheck {
		return nil
	}
	return plan.CheckSecrets(s, fab, targets, excludes, f.Getenv)
}
