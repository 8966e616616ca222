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

// YANGRenderer is implemented by Renderers whose payload is YANG-modelled
// data, so `fabctl render --yang-dir DIR` can prove it against the
// vendor's models offline (package yangval), before any device is
// touched.
type YANGRenderer interface {
	Renderer
	// YANGPayload returns what Render writes, in structured form. Same
	// rules as Render: no credentials, no connections, stable output.
	YANGPayload(t Target) (YANGPayload, error)
}

// YANGPayload is a rendered payload and the model set it conforms to.
// A gNMI driver fills Models, Ops and optionally Tree; the SONiC driver
// Models and ConfigDB.
type YANGPayload struct {
	// Models names the model set: the sub-directory of --yang-dir that
	// holds its modules ("openconfig", "srlinux", "sonic").
	Models string
	// Ops is the SetRequest that configures the device from nothing, in
	// the order it is sent (deletes, replaces, updates): paths in the
	// models and config, list keys, types, ranges, enums, identities,
	// mandatory leaves of replaced subtrees, and references: a queue,
	// profile or interface referred to but not created by the payload
	// (in a module the payload configures) is dangling.
	Ops []YANGOp
	// Tree, when set, is the JSON_IETF configuration Ops leave on a
	// factory-default device (a root object of module-qualified
	// members): references are then resolved in it, so objects the
	// device has from the factory (its interfaces) count as present. It
	// costs a second decode and walk of the payload.
	Tree []byte
	// ConfigDB is a SONiC CONFIG_DB fragment (config_db.json: table ->
	// key -> field -> value), checked against the SONiC YANG models.
	ConfigDB []byte
}

// YANGOp is one SetRequest operation: Op "delete", "replace" or "update";
// Path a gNMI path string (/qos/queues/queue[name=Q3]; ']' and '\' in a
// key value escaped with '\'); Val the RFC 7951 value (nil for delete).
type YANGOp struct {
	Op   string
	Path string
	Val  []byte
}
