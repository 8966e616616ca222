package drivers

// Renderer is implemented by drivers that can render a device's native
// payload from its intent alone, without contacting the device: CLI
// lines, CONFIG_DB JSON, a gNMI SetRequest, host operations, opensm
// files. `fabctl render` writes these files for review, golden tests and
// containerlab startup configs. It is optional: a driver without it
// still plans and applies (Changes works from a diff against live state).
type Renderer interface {
	// Render returns the files that configure t's device to its intent
	// (t.Intent), in a stable order with stable content: same intent,
	// same bytes. It must not read credentials' secrets or open
	// connections.
	Render(t Target) ([]RenderedFile, error)
}

// RenderedFile is one rendered file. Name is a relative, slash-separated
// path without ".." (e.g. "config_db.json", "startup/leaf1.cfg").
type RenderedFile struct {
	Name string
	Data []byte
}
