package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/yangval"
	"github.com/fabctl/fabctl/yangval/check"
)

// render --yang-dir: the payloads are validated by yangval/check; this
// file wires the devices' payloads to it and shows the verdicts.

// yangProfile is how libyang loads a model set (the descriptor's of the
// platform whose set it is; ok false: no platform has it). Its Prefer
// picks among same-named top-level nodes of the set (ietf-interfaces and
// openconfig-interfaces both define "interfaces"), as a device serving
// that origin does.
func yangProfile(set string) (yangval.Profile, bool) {
	for _, p := range builtin.Platforms() {
		if p.YANG.Set == set {
			return p.YANG.Profile, true
		}
	}
	return yangval.Profile{}, false
}

// yangModels are the model sets under --yang-dir (root), for
// yangval/check; noLibYANG forces goyang alone (tests of the fallback).
type yangModels struct {
	root      string
	noLibYANG bool
	// models, once made, keeps the sets loaded across validations.
	models *check.Models
}

func (m *yangModels) check() *check.Models {
	if m.models == nil {
		m.models = &check.Models{Root: m.root, Profile: yangProfile, NoLibYANG: m.noLibYANG}
	}
	return m.models
}

// yangResult is a device's verdict (render -o --json's "yang").
type yangResult = check.Result

// checkPayload is a driver's rendered payload as yangval/check takes it.
func checkPayload(p *drivers.YANGPayload) *check.Payload {
	if p == nil {
		return nil
	}
	out := &check.Payload{Models: p.Models, Tree: p.Tree, ConfigDB: p.ConfigDB}
	for _, o := range p.Ops {
		out.Ops = append(out.Ops, check.Op{Op: o.Op, Path: o.Path, Val: o.Val})
	}
	return out
}

// validateRendered validates every device whose driver renders a
// YANG-modelled payload and records the verdict on the device.
func validateRendered(models *yangModels, devs []renderedDevice) error {
	ps := make([]*check.Payload, len(devs))
	for i := range devs {
		ps[i] = checkPayload(devs[i].yang)
	}
	res, err := models.check().Validate(ps)
	var le *check.LoadError
	if errors.As(err, &le) {
		return fmt.Errorf("render %s: %w", devs[le.Index].Address, le.Err)
	}
	if err != nil {
		return err
	}
	for i := range devs {
		devs[i].YANG = res[i]
	}
	return nil
}

// reportYANG prints the validation per device to w and returns the exit
// code: ExitError when any device's payload violates its models.
func reportYANG(w io.Writer, devs []renderedDevice, human bool) ExitCode {
	valid, invalid, skipped := 0, 0, 0
	validators := map[string]string{} // validator -> note
	for _, d := range devs {
		if d.YANG != nil {
			validators[d.YANG.Validator] = d.YANG.Note
		}
		switch {
		case d.YANG == nil:
			skipped++
		case len(d.YANG.Errors) == 0:
			valid++
			if human {
				fmt.Fprintf(w, "YANG: %s: valid against the %s models in %s (%s)\n", d.Address, d.YANG.Models, d.YANG.Dir, d.YANG.Validator)
			}
		default:
			invalid++
			if human {
				fmt.Fprintf(w, "YANG: %s: %s against the %s models in %s (%s):\n", d.Address,
					plural(len(d.YANG.Errors), "violation", "violations"), d.YANG.Models, d.YANG.Dir, d.YANG.Validator)
				for _, e := range d.YANG.Errors {
					line := "  " + e.Path + ": " + e.Message
					if e.Value != "" {
						line += fmt.Sprintf(" (value %q)", e.Value)
					}
					switch {
					case e.Kind != "" && e.Constraint != "" && !strings.Contains(e.Message, e.Constraint):
						line += " [" + e.Kind + " " + e.Constraint + "]"
					case e.Kind != "":
						line += " [" + e.Kind + "]"
					}
					fmt.Fprintln(w, line+" ("+e.Validator+")")
				}
			}
		}
	}
	if human {
		for _, v := range []string{validatorLibYANG, validatorGoYANG} {
			note, ok := validators[v]
			switch {
			case !ok:
			case v == validatorLibYANG:
				fmt.Fprintln(w, "YANG: validated by libyang (the resulting configuration: must, when, if-feature, leafref, mandatory, "+
					"types, with the platform's feature set) and goyang (the operations: paths, config, keys)")
			default:
				fmt.Fprintln(w, "YANG: validated by goyang alone: "+note)
			}
		}
		fmt.Fprintf(w, "YANG: %d valid, %d invalid, %d without a YANG-modelled payload (CLI, host or no offline renderer)\n", valid, invalid, skipped)
	}
	if invalid > 0 {
		return ExitError
	}
	return ExitOK
}

// yangDeviceJSON is a device's validation in render -o --json output.
type yangDeviceJSON struct {
	Address string `json:"address"`
	*yangResult
}

func yangJSON(devs []renderedDevice) []yangDeviceJSON {
	var out []yangDeviceJSON
	for _, d := range devs {
		if d.YANG != nil {
			out = append(out, yangDeviceJSON{Address: d.Address, yangResult: d.YANG})
		}
	}
	return out
}

// Validator names of a verdict.
const (
	validatorLibYANG = check.ValidatorLibYANG
	validatorGoYANG  = check.ValidatorGoYANG
)

type yangIssue = check.Issue
