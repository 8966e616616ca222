package lint

func transportRules() []Rule { return nil }
