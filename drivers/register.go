package drivers

// Builtin returns the registry of every driver in this build. This is the
// one list: a driver package exports a constructor and is added here; no
// package registers itself from init().
//
// The switch drivers (SONiC, Cumulus, EOS, NX-OS over SSH; OpenConfig and
// SR Linux over gNMI) and the host driver are added here as they land. The
// in-memory driver (drivers/memory) is for tests and is not listed.
func Builtin() *Registry {
	r := NewRegistry()
	return r
}
