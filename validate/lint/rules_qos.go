package lint

func qosRules() []Rule { return nil }
