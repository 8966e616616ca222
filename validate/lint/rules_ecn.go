package lint

func ecnRules() []Rule { return nil }
