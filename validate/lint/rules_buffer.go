package lint

func bufferRules() []Rule { return nil }
