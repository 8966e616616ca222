package lint

func hostRules() []Rule { return nil }
