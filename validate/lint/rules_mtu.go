package lint

func mtuRules() []Rule { return nil }
