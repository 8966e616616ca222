package view

import (
	"fmt"
	"io"
	"strings"

	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/internal/iostreams"
)

// ImportResult is what fabctl import shows: the written spec and the
// report of what import chose, wrote and left out.
type ImportResult struct {
	Fabric string
	Out    string // the file written ("": the spec goes to stdout)
	HCL    []byte
	Report *importer.Report
}

// ImportJSONDoc is fabctl import --json (docs/json-output.md).
type ImportJSONDoc struct {
	FormatVersion string `json:"format_version"`
	Fabric        string `json:"fabric"`
	// Output is the file the spec was written to; Spec holds it instead
	// when there is no -o.
	Output string `json:"output,omitempty"`
	Spec   string `json:"spec,omitempty"`
	importer.Report
}

// WriteImportJSON writes the --json document on stdout.
func WriteImportJSON(ios *iostreams.IOStreams, r ImportResult) error {
	doc := ImportJSONDoc{FormatVersion: JSONFormatVersion, Fabric: r.Fabric, Output: r.Out, Report: *r.Report}
	if r.Out == "" {
		doc.Spec = string(r.HCL)
	}
	return WriteJSON(ios.Out, doc)
}

// WriteImportHuman writes the spec on stdout when there is no -o (its
// exact bytes), and the report: on stdout when the spec went to a file,
// else on stderr.
func WriteImportHuman(ios *iostreams.IOStreams, r ImportResult) error {
	w := ios.Out
	if r.Out == "" {
		if _, err := ios.DataOut().Write(r.HCL); err != nil {
			return err
		}
		w = ios.ErrOut
	}
	return writeImportReport(w, r)
}

func writeImportReport(w io.Writer, r ImportResult) error {
	rep := r.Report
	var b strings.Builder
	fmt.Fprintf(&b, "Read %d of %d devices.\n", rep.Read, rep.Devices)
	for _, u := range rep.Unread {
		fmt.Fprintf(&b, "  not read: %s: %s\n", u.Device, u.Error)
	}
	if len(rep.Choices) > 0 {
		b.WriteString("\nFabric settings (the value most devices have):\n")
		for _, c := range rep.Choices {
			fmt.Fprintf(&b, "  %s = %s  (%d of %d)", c.Setting, c.Value, c.Agree, c.Of)
			if len(c.Dissent) > 0 {
				fmt.Fprintf(&b, "; differ: %s", strings.Join(c.Dissent, ", "))
			}
			b.WriteString("\n")
		}
	}
	if len(rep.Overrides) > 0 {
		fmt.Fprintf(&b, "\nOverrides written (%d):\n", len(rep.Overrides))
		for _, o := range rep.Overrides {
			where := o.Device
			if o.Block != "" {
				where += " " + o.Block
			}
			fmt.Fprintf(&b, "  %s: %s = %s\n", where, o.Attribute, oneLine(o.Value))
		}
	}
	if sm := rep.SubnetManager; sm != nil {
		writeSubnetManagerImport(&b, sm)
	}
	if len(rep.LeftOut) > 0 {
		un := 0
		for _, l := range rep.LeftOut {
			if l.Unmanaged {
				un++
			}
		}
		fmt.Fprintf(&b, "\nLeft out: the spec does not say these (%d); %d written as unmanaged, left as the devices run them, %d plan will show as changes:\n",
			len(rep.LeftOut), un, len(rep.LeftOut)-un)
		for _, l := range rep.LeftOut {
			mark := ""
			if l.Unmanaged {
				mark = " [unmanaged]"
			}
			fmt.Fprintf(&b, "  %s %s: device %s, spec %s: %s%s\n", l.Device, l.Path, orNone(l.Live), orNone(l.Desired), l.Reason, mark)
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", n)
	}
	if r.Out != "" {
		fmt.Fprintf(&b, "\nWrote %s. Next: fabctl validate --static %s, then fabctl plan %s\n", r.Out, r.Out, r.Out)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSubnetManagerImport says what import read from the subnet
// manager: each partition and what became of it, the QoS attributes
// written, and what the written spec leaves alone.
func writeSubnetManagerImport(b *strings.Builder, sm *importer.SubnetManagerImport) {
	qos := "off"
	if sm.QoS {
		qos = "on"
	}
	fmt.Fprintf(b, "\nSubnet manager %s (opensm QoS %s): %d partitions read\n", sm.Device, qos, len(sm.Partitions))
	for _, p := range sm.Partitions {
		what := "left out"
		switch p.Written {
		case "partition":
			what = "written"
		case "implicit":
			what = "the default partition fabctl writes without a partition block"
		}
		fmt.Fprintf(b, "  partition %q (P_Key %s): %d members, %d named by the inventory: %s\n", p.Name, p.PKey, p.Members, p.Named, what)
	}
	if len(sm.Written) > 0 {
		fmt.Fprintf(b, "  infiniband attributes written: %s\n", strings.Join(sm.Written, ", "))
	}
	for _, u := range sm.Untouched {
		fmt.Fprintf(b, "  not managed by the written spec, kept on the subnet manager: %s = %s: %s\n", u.Path, oneLine(u.Live), u.Reason)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
