package sonic

import "github.com/fabctl/fabctl/drivers"

var _ drivers.YANGRenderer = (*Driver)(nil)

// YANGPayload is the CONFIG_DB fragment Render writes, for `fabctl render
// --yang-dir` to check against the SONiC YANG models.
func (d *Driver) YANGPayload(t drivers.Target) (drivers.YANGPayload, error) {
	sw, err := switchIntent(t)
	if err != nil {
		return drivers.YANGPayload{}, err
	}
	db, err := Desired(sw)
	if err != nil {
		return drivers.YANGPayload{}, err
	}
	return drivers.YANGPayload{Models: "sonic", ConfigDB: db.JSON()}, nil
}
