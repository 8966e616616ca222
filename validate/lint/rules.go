package lint

// Rules returns every rule in the order docs/rules.md lists them. This is
// the one registry: a rule not listed here does not run.
func Rules() []Rule {
	var r []Rule
	r = append(r, mtuRules()...)
	r = append(r, transportRules()...)
	r = append(r, ibRules()...)
	r = append(r, ibFabricRules()...)
	r = append(r, qosRules()...)
	r = append(r, bufferRules()...)
	r = append(r, ecnRules()...)
	r = append(r, safetyRules()...)
	r = append(r, platformRules()...)
	r = append(r, hostRules()...)
	return r
}
