// Package gnmic reads gnmic's `set --request-file` format into a gNMI SetRequest, as gnmic
// itself does, for tests that apply fabctl's rendered request files (gnmic is not served here).
package gnmic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"gopkg.in/yaml.v3"

	gnmitransport "github.com/fabctl/fabctl/drivers/transport/gnmi"
)

// gnmic's request file, as gnmic reads it (openconfig/gnmic at 59775038,
// pkg/config/set.go: SetRequestFile, UpdateItem, CreateSetRequestFromFile;
// docs/cmd/set.md "Template Format"): the file is rendered as a Go text
// template, then unmarshalled as YAML (JSON is YAML) into these members;
// members it does not know are ignored, which is why a file with
// "update"/"replace"/"val" made gnmic send an empty Set and exit 0.
type gnmicFile struct {
	Updates       []gnmicItem `yaml:"updates"`
	Replaces      []gnmicItem `yaml:"replaces"`
	UnionReplaces []gnmicItem `yaml:"union-replaces"`
	Deletes       []string    `yaml:"deletes"`
	CommitID      string      `yaml:"commit-id"`
}

type gnmicItem struct {
	Path     string `yaml:"path"`
	Value    any    `yaml:"value"`
	Encoding string `yaml:"encoding"`
}

// SetRequest is the SetRequest `gnmic set --request-file FILE
// [--encoding ENC]` sends for file, built the way gnmic builds it
// (CreateSetRequestFromFile): path "" is "/"; an item's encoding, else
// the --encoding flag's (gnmic's default is "json"); the value
// re-encoded as JSON (json.Encoder) and sent as json_val or
// json_ietf_val (pkg/api/gnmi_msgs.go value(): a string that is valid
// JSON is sent as is); "deletes" as paths. This is a substitute for
// running gnmic itself, which the module proxy does not serve (403 for
// github.com/openconfig/gnmic): what differs is the path parser (fabctl's
// drivers/transport/gnmi.Path, not gnmic's api.Path) and that the
// template step is only checked (a file with "{{" is refused, since
// gnmic would execute it). Encodings other than json and json_ietf,
// union-replaces and commit actions are refused (fabctl writes none).
// The request must not be empty: gnmic would send it and exit 0 having
// configured nothing.
func SetRequest(file []byte, encoding string) (*gpb.SetRequest, error) {
	if bytes.Contains(file, []byte("{{")) {
		return nil, fmt.Errorf("the file holds a Go template action ({{): gnmic would execute it")
	}
	var f gnmicFile
	if err := yaml.Unmarshal(file, &f); err != nil {
		return nil, fmt.Errorf("gnmic request file: %w", err)
	}
	if len(f.UnionReplaces) > 0 || f.CommitID != "" {
		return nil, fmt.Errorf("union-replaces and commit actions are not modelled")
	}
	if encoding == "" {
		encoding = "json"
	}
	req := &gpb.SetRequest{}
	for _, list := range []struct {
		items []gnmicItem
		out   *[]*gpb.Update
	}{{f.Updates, &req.Update}, {f.Replaces, &req.Replace}} {
		for _, it := range list.items {
			if it.Path == "" {
				it.Path = "/"
			}
			p, err := gnmitransport.Path(strings.TrimSpace(it.Path))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.Path, err)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(it.Value); err != nil {
				return nil, fmt.Errorf("%s: %w", it.Path, err)
			}
			data := bytes.TrimSpace(buf.Bytes())
			e := it.Encoding
			if e == "" {
				e = encoding
			}
			var tv *gpb.TypedValue
			switch strings.ToLower(e) {
			case "json":
				tv = &gpb.TypedValue{Value: &gpb.TypedValue_JsonVal{JsonVal: data}}
			case "json_ietf":
				tv = &gpb.TypedValue{Value: &gpb.TypedValue_JsonIetfVal{JsonIetfVal: data}}
			default:
				return nil, fmt.Errorf("%s: encoding %q not modelled (json, json_ietf)", it.Path, e)
			}
			*list.out = append(*list.out, &gpb.Update{Path: p, Val: tv})
		}
	}
	for _, s := range f.Deletes {
		p, err := gnmitransport.Path(strings.TrimSpace(s))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
		req.Delete = append(req.Delete, p)
	}
	if len(req.Update)+len(req.Replace)+len(req.Delete) == 0 {
		return nil, fmt.Errorf("no updates, replaces or deletes: gnmic would send an empty Set and exit 0 with nothing configured")
	}
	return req, nil
}
